# An ACP agent that floods its client: a prompt gets COUNT updates of
# SIZE bytes each, then end_turn, unless session/cancel comes first:
# then it stops, creates the file CANCELLED and answers cancelled. With
# a FIFO, the flood begins once a line can be read from it.
# Arguments: COUNT SIZE CANCELLED [FIFO].
count=$1 cancelled=$3 fifo=$4
text=$(printf "%$2s" "" | tr ' ' y)
flooder=
while IFS= read -r line; do
	id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
	case $line in
	*'"method":"initialize"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{}}}\n' "$id" ;;
	*'"method":"session/new"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"s1"}}\n' "$id" ;;
	*'"method":"session/prompt"'*)
		# The flood runs beside this loop, so session/cancel is read
		# while it runs; it alone answers the prompt, either way. A
		# trap runs once the printf under way has written its line.
		(
			trap 'printf "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"stopReason\":\"cancelled\"}}\n" "$id"; exit 0' TERM
			[ -n "$fifo" ] && read -r _ <"$fifo"
			i=0
			while [ "$i" -lt "$count" ]; do
				printf '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%s"}}}}\n' "$text"
				i=$((i + 1))
			done
			printf '{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}\n' "$id"
		) &
		flooder=$! ;;
	*'"method":"session/cancel"'*)
		: >"$cancelled"
		[ -n "$flooder" ] && kill "$flooder" 2>/dev/null ;;
	esac
done
