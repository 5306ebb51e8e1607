# pgveil: the API and the Postgres proxy (`pgveil serve`), built from this repository.
#   docker build -t pgveil .
#   docker run --rm -p 8080:8080 -p 6432:6432 -v "$PWD/my-config:/app/config" pgveil serve --config config/pgveil.yaml
# docker-compose.yml runs it with PostgreSQL and the demo policies.

FROM node:20-slim AS build
WORKDIR /app
# node-gyp's toolchain for the two native addons (native/crypto: FF1 and the token digests on
# OpenSSL; native/socket: the sessions' socket I/O). Node's headers come with the image.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# No install scripts: they fetch test tools (embedded PostgreSQL, esbuild); the addons are built below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY native ./native
# The addons against the image's own Node headers (no download). A failure here fails the image:
# with the toolchain present it is a fault, and an image without them is slower, not different.
RUN npm run build && npm_config_nodedir=/usr/local npm run build:native

FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/native/crypto/build/Release/pgveil_crypto.node ./native/crypto/build/Release/
COPY --from=build /app/native/socket/build/Release/pgveil_socket.node ./native/socket/build/Release/
COPY bin ./bin
COPY config ./config
# The master key folder: a volume in docker-compose.yml, writable by the unprivileged user.
RUN mkdir -p .pgveil && chown node:node .pgveil && chmod 700 .pgveil
USER node
EXPOSE 8080 6432
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/pgveil.js"]
CMD ["serve", "--config", "config/pgveil.yaml"]
