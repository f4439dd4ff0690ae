# dshd: a static binary in a minimal image, speaking ACP on stdio.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o /out/dshd ./cmd/dshd

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/dshd /usr/local/bin/dshd
USER nonroot:nonroot
ENV XDG_STATE_HOME=/home/nonroot/.local/state
ENTRYPOINT ["/usr/local/bin/dshd"]
