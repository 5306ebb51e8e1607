# pgveil: the API and the Postgres proxy (`pgveil serve`), built from this repository.
#   docker build -t pgveil .
#   docker run --rm -p 8080:8080 -p 6432:6432 -v "$PWD/my-config:/app/config" pgveil serve --config config/pgveil.yaml
# docker-compose.yml runs it with PostgreSQL and the demo policies.

FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: the build needs only TypeScript; they fetch test tools (embedded PostgreSQL, esbuild).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
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
