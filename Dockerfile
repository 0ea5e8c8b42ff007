# The edctl image: `edctl agent` by default (the rendered install in dist/agent-install.k8s.yaml runs it), and every
# other edctl command with `docker run IMAGE <command>`.
#
#   docker build -t registry.example.com/platform/extended-deployment:0.1.0 .

# Build: install every dependency from the lock file, compile TypeScript to lib/ and bundle edctl into lib/cli/main.js
# (the last step of package.json "build"): the agent starts from 35 files instead of 348 modules, holds 4-5 MiB less.
# One exact Node.js release in both stages: the e2e suites and the benches run the agent on it (test/cluster/image-node.ts
# reads it here), so a new release reaches the image only through a commit those runs saw.
FROM node:22.23.5-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are copied; the build runs explicitly below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.cjs.json ./
COPY core ./core
COPY constructs ./constructs
COPY agent ./agent
COPY cli ./cli
COPY examples ./examples
RUN npm run build

# Run: production dependencies and the compiled lib/ only; no compiler, no sources, no npm cache.
FROM node:22.23.5-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/lib ./lib
# A numeric non-root user, so the kubelet can verify runAsNonRoot; the root filesystem can be read-only.
USER 10001:10001
EXPOSE 8080
# The agent install sets its own command with Node.js flags (constructs/agent-install.ts AGENT_COMMAND).
ENTRYPOINT ["node", "lib/cli/main.js"]
CMD ["agent"]
