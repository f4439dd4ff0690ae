# An ACP agent that answers initialize, session/new and session/prompt;
# a prompt sends two fs/read_text_file requests for READ_PATH (ids 100
# and 101), then says what each answer was, in the order they came: "ok BYTES" for the length of
# its result line, or the reason of its error, and ends the turn.
said=""
n=0
while IFS= read -r line; do
	id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
	case $line in
	*'"method":"initialize"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{}}}\n' "$id" ;;
	*'"method":"session/new"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"s1"}}\n' "$id" ;;
	*'"method":"session/prompt"'*)
		prompt=$id
		for r in 100 101; do
			printf '{"jsonrpc":"2.0","id":%s,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"%s"}}\n' $r "$READ_PATH"
		done ;;
	*'"result":'*|*'"error":'*)
		case $id in
		100|101)
			case $line in
			*'"error":'*) said="$said [$(printf '%s\n' "$line" | sed -n 's/.*"code":\(-*[0-9]*\).*"reason":"\([^"]*\)".*/\1 \2/p')]" ;;
			*) said="$said [ok ${#line}]" ;;
			esac
			n=$((n+1))
			if [ $n = 2 ]; then
				printf '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"read:%s"}}}}\n' "$said"
				printf '{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}\n' "$prompt"
			fi ;;
		esac ;;
	esac
done
