# syntax=docker/dockerfile:1
# One recipe, one image per deployable: pass the workspace package to build, e.g.
#   docker build --build-arg PACKAGE=@payments/merchant-service -t payments/merchant .
# The image holds only that package and its production dependencies (pnpm deploy).
ARG NODE_VERSION=20

FROM node:${NODE_VERSION}-bookworm AS build
ARG PACKAGE
RUN test -n "$PACKAGE" || (echo "--build-arg PACKAGE=@payments/<name> is required" && false)
RUN npm install -g pnpm@10
WORKDIR /src
COPY . .
RUN pnpm install --frozen-lockfile --reporter=append-only \
 && pnpm --filter "$PACKAGE" deploy --legacy --prod /app

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production \
    GRPC_HOST=0.0.0.0 \
    HOST=0.0.0.0 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
# Services listen on GRPC_PORT (9090), the gateway on PORT (8080).
EXPOSE 9090 8080
CMD ["node", "--import", "tsx", "src/main.ts"]
