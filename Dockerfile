# FeedbackHost container image. `make container-check` proves the runtime stage on machines without a Docker engine:
# it reads RUNTIME_PACKAGES, APP_USER, APP_UID, ENV, EXPOSE, HEALTHCHECK and ENTRYPOINT from this file.

# --- builder: Swift 6.3 on Debian 12 ---
FROM swift:6.3-bookworm AS builder
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libcurl4-openssl-dev zlib1g-dev libsqlite3-dev libpq-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Resolve dependencies in their own layer so that a source change does not fetch them again.
COPY Package.swift ./
RUN swift package resolve
COPY Sources ./Sources
COPY Plugins ./Plugins
# The Swift runtime libraries are no Debian packages: link them statically so that the runtime stage needs none.
# FEEDBACKHOST_NO_MANUAL_CLOCK: the image's server refuses --clock manual and skip (clocks that tests move, for local
# test instances only): its timers always follow the real time.
RUN swift build -c release --static-swift-stdlib -Xswiftc -DFEEDBACKHOST_NO_MANUAL_CLOCK --product feedback-host \
    && install -D -m 0755 "$(swift build -c release --show-bin-path)/feedback-host" /out/feedback-host

# --- runtime: Debian 12 slim with only what the binary loads ---
FROM debian:bookworm-slim
# What the release binary needs besides glibc (readelf -d: libcurl.so.4, libz.so.1, libsqlite3.so.0, libpq.so.5; ldd shows the
# rest come with libcurl4), CA certificates for upstream HTTPS and time zone data. Keep this one line: make container-check reads it.
ARG RUNTIME_PACKAGES="libcurl4 zlib1g libsqlite3-0 libpq5 ca-certificates tzdata"
ARG APP_USER=feedbackhost
ARG APP_UID=10001
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${RUNTIME_PACKAGES} \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --uid ${APP_UID} --user-group --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin ${APP_USER} \
    && mkdir -p /var/lib/feedbackhost && chown ${APP_UID}:${APP_UID} /var/lib/feedbackhost
COPY --from=builder /out/feedback-host /usr/local/bin/feedback-host
USER ${APP_UID}:${APP_UID}
# Configuration: every --flag is also FEEDBACKHOST_<FLAG> (docs/API.md, "Configuration"). In a container the server
# listens on every interface; logs are one JSON object per line on standard error.
# Safe by default: tokens per session and scope (docs/API.md, "Tokens"). Anyone may create a session and gets its
# read, post and admin tokens, signed with the key in a mounted secret (32+ random bytes; without it the container
# exits at once with a message saying so). A backend that signs its own JWTs sets FEEDBACKHOST_AUTH_KEYS and
# FEEDBACKHOST_AUTH_CREATE=token; FEEDBACKHOST_AUTH=off turns tokens off.
ENV FEEDBACKHOST_HOST=0.0.0.0 \
    FEEDBACKHOST_PORT=8080 \
    FEEDBACKHOST_LOG_FORMAT=json \
    FEEDBACKHOST_DATA_DIR=/var/lib/feedbackhost \
    FEEDBACKHOST_AUTH=jwt \
    FEEDBACKHOST_AUTH_CREATE=open \
    FEEDBACKHOST_AUTH_KEY_FILE=/run/secrets/feedbackhost-auth-key
# The session journal (SQLite, WAL): keep it on a volume so sessions survive a restart of the container.
VOLUME ["/var/lib/feedbackhost"]
EXPOSE 8080
# No curl in the image: bash (in every Debian image) speaks HTTP/1.1 over /dev/tcp. GET /healthz answers 200 while
# the process serves; readiness (/readyz) is for the balancer and Kubernetes, not for restarting the container.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${FEEDBACKHOST_PORT:-8080} && printf 'GET /healthz HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && read -r -t 2 version status rest <&3 && [ \"$status\" = 200 ]"]
# SIGTERM: /readyz turns 503, the listener closes, in-flight requests finish within 10 s, then exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/feedback-host"]
