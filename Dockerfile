# syntax=docker/dockerfile:1

# Build stage: static binaries for the server and the client. No
# `go mod download`: go build fetches only the modules these two binaries
# import (not the test-only ones), into a cache kept between builds.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/tooldex-server ./cmd/server && \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/tooldex ./cmd/tooldex

# Runtime stage: distroless, no shell, runs as an unprivileged user.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/tooldex-server /usr/local/bin/tooldex-server
COPY --from=build /out/tooldex /usr/local/bin/tooldex
USER nonroot:nonroot
EXPOSE 50051
# Secure by default: on 0.0.0.0 the server refuses to start without a
# credential source. Mount credentials read-only and name them, e.g.
#   docker run -v "$PWD/secrets:/etc/tooldex:ro" \
#     -e TOOLDEX_AUTH_TOKENS=/etc/tooldex/tokens.json \
#     -e TOOLDEX_TLS_CERT=/etc/tooldex/server.pem -e TOOLDEX_TLS_KEY=/etc/tooldex/server-key.pem ...
# (or TOOLDEX_OIDC_ISSUER with TOOLDEX_OIDC_AUDIENCE, TOOLDEX_CLIENT_CA for
# hosts' certificates; TOOLDEX_INSECURE_ANONYMOUS=true only for a throwaway
# trial). See the README's "Authentication".
ENV TOOLDEX_ADDR=0.0.0.0:50051
ENTRYPOINT ["/usr/local/bin/tooldex-server"]
