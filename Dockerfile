# codexd as a container: the compiled daemon (`npm run build`) and the codex CLI from the npm
# registry, the version package.json pins. State (database, token, codex home) lives on the
# volume /var/lib/codexd; the daemon runs as the unprivileged user codexd (uid 10001).
#
#   docker build -t codexd .
#   docker run -v codexd-state:/var/lib/codexd -v "$PWD/tls:/etc/codexd/tls:ro" \
#     -e OPENAI_API_KEY -p 7420:7420 codexd
#
# The image's config (deploy/docker/codexd.jsonc) listens on 0.0.0.0:7420 with TLS from
# /etc/codexd/tls/tls.crt and tls.key (the API token must not cross a network in plain text);
# the token is generated into /var/lib/codexd/state/token at first start. Kubernetes: deploy/.

FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build \
  && node -p "require('./package.json').dependencies['@openai/codex']" > /src/dist/codex-version

FROM node:22-bookworm-slim
# git for the worktrees agents work in; codex from the npm registry, pinned like the build's.
RUN apt-get update \
  && apt-get install -y --no-install-recommends git ca-certificates \
  && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/dist/codex-version /usr/local/lib/codexd/codex-version
RUN npm install -g "@openai/codex@$(cat /usr/local/lib/codexd/codex-version)" \
  && npm cache clean --force
RUN groupadd --system --gid 10001 codexd \
  && useradd --system --uid 10001 --gid codexd --home-dir /var/lib/codexd --shell /usr/sbin/nologin codexd \
  && install -d -o codexd -g codexd -m 0700 /var/lib/codexd
COPY --from=build /src/dist/codexd /usr/local/bin/codexd
COPY policies /etc/codexd/policies
COPY deploy/docker/codexd.jsonc /etc/codexd/codexd.jsonc
COPY deploy/docker/prestop-drain.mjs /usr/local/lib/codexd/prestop-drain.mjs
USER 10001:10001
ENV HOME=/var/lib/codexd
WORKDIR /var/lib/codexd
VOLUME ["/var/lib/codexd"]
EXPOSE 7420
# SIGTERM stops gracefully within 10 s (running turns end with daemon_shutdown); SIGUSR2 replaces
# the codex children one at a time between turns.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/codexd"]
CMD ["serve", "--config", "/etc/codexd/codexd.jsonc"]
