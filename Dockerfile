# agentgate: one image for every role. `docker build -t agentgate:0.1.0 .`, then see deploy/README.md.
# It always runs on an external PostgreSQL (DATABASE_URL): the embedded one's binaries are left out.
ARG NODE_IMAGE=node:24-trixie-slim

FROM ${NODE_IMAGE} AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only. The optional ones are the embedded PostgreSQL binaries and pg's Cloudflare
# socket; without them no dependency has an install script, so none is allowed to run.
RUN npm ci --omit=dev --omit=optional --ignore-scripts

FROM ${NODE_IMAGE}
# tini, as PID 1, passes SIGTERM on to Node (which drains) and reaps the processes tools start (bash, MCP servers).
# bubblewrap is the sandbox of the bash tool (TOOLS_BASH_ENABLED=1); the container must then allow user
# namespaces (deploy/README.md, "The bash tool").
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini bubblewrap \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV GATEWAY_ENV=production
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json ./
COPY config ./config
COPY src ./src
COPY console/dist ./console/dist
COPY deploy/probe.ts ./deploy/probe.ts
# The base image's `node` user, by number so that Kubernetes' runAsNonRoot can check it. Nothing it runs
# writes to the image's files, so the root filesystem may be mounted read-only.
USER 1000:1000
EXPOSE 8080
# Liveness of every role: a worker serves its probes (and /metrics) on PORT too, though no API.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["node", "deploy/probe.ts", "/health"]
ENTRYPOINT ["tini", "--", "node", "src/main.ts"]
CMD ["serve", "--role", "all"]
