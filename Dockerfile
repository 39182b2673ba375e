# The service image used by docker-compose.yml. TypeScript runs through tsx: no build step.

# Dependencies, with a compiler at hand in case better-sqlite3 has no prebuilt binary to download.
FROM node:20-slim AS deps
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# Everything in the lockfile, as in development (tsx runs the sources; the CLI uses the same tree).
RUN npm ci && npm cache clean --force

FROM node:20-slim
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY . .
RUN mkdir -p /app/data && chown -R node:node /app/data
ENV NODE_ENV=production
USER node
EXPOSE 3000
CMD ["npm", "start"]
