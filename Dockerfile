# syntax=docker/dockerfile:1
# Build stage: compiles TypeScript and the native addons (better-sqlite3, argon2).
FROM node:22-bookworm-slim AS build
WORKDIR /app
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# `npm run build` compiles the server (src/, tsconfigs) and then the web client (build:web), which
# generates the API types with scripts/ and bundles web/. test/ops/image.test.ts replays this stage.
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY web ./web
COPY src ./src
# The AWS SDK (~22 MB) is an optional dependency, kept only for an image that stores attachments in
# S3: docker build --build-arg WITH_S3=yes . (without it, ATTACHMENT_STORAGE=s3 stops at start-up).
ARG WITH_S3=no
RUN npm run build && npm prune --omit=dev $([ "$WITH_S3" = yes ] || echo --omit=optional)

# Runtime stage: no compiler, no dev dependencies, not root.
FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATABASE_URL=sqlite:/data/vellum.db \
    MALLOC_MMAP_THRESHOLD_=1048576
# MALLOC_MMAP_THRESHOLD_: glibc hands Argon2's 19 MiB blocks back to the OS instead of keeping
# them, which held peak RSS ~100 MB lower in the benchmarks (BENCHMARKS.md).
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node directly (not npm) so SIGTERM reaches the server and shutdown is graceful.
CMD ["node", "dist/main.js"]
