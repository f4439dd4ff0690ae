# dshd in a small image in which commands work: the agent's run_command
# needs a shell, git and the usual tools, so the runtime is Alpine (busybox
# sh plus bash, git, coreutils, ca-certificates) rather than a distroless
# base without /bin/sh. The binary stays static; the user is not root.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t dshd .
#   docker run -i --rm -e DEEPSEEK_API_KEY -v "$PWD:/work" -w /work dshd            # ACP on stdio
#   docker run -d -p 7777:7777 -v dshd-state:/home/dshd/.local/state \
#     -e DSHD_TOKEN_FILE=/run/secrets/dshd-token dshd serve --listen tcp:0.0.0.0:7777
FROM golang:1.26-alpine AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/dshd/dshd/cmd/dshd/internal/version.Version=${VERSION}" \
      -o /out/dshd ./cmd/dshd

FROM alpine:3.22
RUN apk add --no-cache bash git coreutils ca-certificates \
 && adduser -D -u 10001 -h /home/dshd dshd
COPY --from=build /out/dshd /usr/local/bin/dshd
USER dshd:dshd
WORKDIR /home/dshd
ENV XDG_STATE_HOME=/home/dshd/.local/state XDG_CONFIG_HOME=/home/dshd/.config
ARG VERSION=dev
LABEL org.opencontainers.image.title="dshd" org.opencontainers.image.version="${VERSION}"
ENTRYPOINT ["/usr/local/bin/dshd"]
