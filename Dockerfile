# syntax=docker/dockerfile:1

# Build: a static binary (CGO_ENABLED=0; the SQLite driver is pure Go), so the runtime image needs
# no C library of a matching version.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/threadflow ./cmd/bot

# Runtime: Alpine rather than distroless, because workflows run shell nodes (/bin/sh) and git
# worktrees (REPO_PATH). The Claude Code and Codex CLIs are not included: build FROM this image and
# install the ones your workflows use, or point CLAUDE_BIN / CODEX_BIN at a mounted binary.
FROM alpine:3.22
RUN apk add --no-cache ca-certificates git tzdata \
 && adduser -D -H -u 10001 threadflow \
 && mkdir /data && chown threadflow:threadflow /data
COPY --from=build /out/threadflow /usr/local/bin/threadflow

# THREADFLOW_HOME holds the SQLite database (when DATABASE_URL is unset) and run working
# directories: keep it on a volume so runs survive a container replacement.
ENV THREADFLOW_HOME=/data
VOLUME /data

# Inside a container the loopback default (127.0.0.1:8080) is unreachable from outside, so listen
# on every interface. On a non-loopback address the bot refuses to start without DASHBOARD_TOKEN
# (docker run -e DASHBOARD_TOKEN=...), so the dashboard is never open to the network by accident;
# the health endpoints (/healthz, /readyz) stay open for probes.
ENV HTTP_ADDR=0.0.0.0:8080
EXPOSE 8080

USER threadflow
# docker stop waits 10s before SIGKILL, less than SHUTDOWN_GRACE (20s): stop a container with
# `docker stop -t 30` (compose: stop_grace_period, Kubernetes: terminationGracePeriodSeconds) so
# it can hand its runs back first. STOPSIGNAL is SIGTERM, the bot's graceful shutdown.
STOPSIGNAL SIGTERM
# The health check follows HTTP_ADDR's port (docker run -e HTTP_ADDR=0.0.0.0:9090 works as is); it
# asks 127.0.0.1, which a bot listening on 0.0.0.0 or [::] answers.
HEALTHCHECK --interval=30s --timeout=5s CMD wget -q -O /dev/null "http://127.0.0.1:${HTTP_ADDR##*:}/healthz" || exit 1
ENTRYPOINT ["/usr/local/bin/threadflow"]
CMD ["serve"]
