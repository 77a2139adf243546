# syntax=docker/dockerfile:1
# One recipe, one image per deployable: pass the workspace package to build, e.g.
#   docker build --build-arg PACKAGE=@payments/merchant-service -t payments/merchant .
# The image holds only that package's compiled dist/ and its production dependencies
# (pnpm deploy), whose workspace packages (kit, contracts, …) come compiled too; no
# TypeScript, no tsx. It runs `node dist/main.js` under tini as the non-root `node` user.
ARG NODE_VERSION=20

FROM node:${NODE_VERSION}-bookworm AS build
ARG PACKAGE
RUN test -n "$PACKAGE" || (echo "--build-arg PACKAGE=@payments/<name> is required" && false)
RUN npm install -g pnpm@10
WORKDIR /src
COPY . .
# Dev dependencies too: the build needs typescript. Then every package is compiled to its
# dist/ (tsc -b, a few seconds) *before* the deploy: the deployed package and each of its
# workspace dependencies are copied with their package.json `files` (dist/ only), and their
# `exports` resolve to dist/ under plain node. The check fails the image build, not the
# container, when the entry point is missing.
RUN pnpm install --frozen-lockfile --reporter=append-only \
 && pnpm build \
 && pnpm --filter "$PACKAGE" deploy --legacy --prod /app \
 && test -f /app/dist/main.js

FROM node:${NODE_VERSION}-bookworm-slim
# tini as PID 1: forwards SIGTERM to node (which drains and exits) and reaps zombies.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
# Source maps (shipped beside the .js) turn stack traces into src/*.ts lines (about 2 MB
# resident). A young generation of 2 × 8 MB instead of V8's 2 × 16 MB and two malloc arenas
# instead of one per thread keep an idle service near 100 MB resident; `pnpm bench` (which
# runs every compiled process with these two settings) measured no throughput cost from
# either, while 4 MB semi-spaces cost a third of POST /v1/deposit (BENCHMARKS.md).
ENV NODE_ENV=production \
    NODE_OPTIONS="--enable-source-maps --max-semi-space-size=8 --expose-gc" \
    MALLOC_ARENA_MAX=2 \
    GRPC_HOST=0.0.0.0 \
    HOST=0.0.0.0 \
    CONSOLE_HOST=0.0.0.0 \
    DATA_DIR=/data
WORKDIR /app
# Owned by root, read-only to the `node` user that runs it; only /data is writable.
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
# Services listen on GRPC_PORT (9090), the gateway on PORT (8080), the console on CONSOLE_PORT (8081).
EXPOSE 9090 8080 8081
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
