# An ACP agent that answers initialize, session/new and session/prompt;
# a prompt gets GHOSTS updates for session ids it never announces first.
while IFS= read -r line; do
	id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
	case $line in
	*'"method":"initialize"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{}}}\n' "$id" ;;
	*'"method":"session/new"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"s1"}}\n' "$id" ;;
	*'"method":"session/prompt"'*)
		i=0
		while [ $i -lt "$GHOSTS" ]; do
			printf '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"ghost-%d","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"g"}}}}\n' $i
			i=$((i+1))
		done
		printf '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done"}}}}\n'
		printf '{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}\n' "$id" ;;
	esac
done
