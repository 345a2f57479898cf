# Vigil in a container (README "Install", Docker). The build stage compiles the single binary with
# the Bun that npm installs; the image holds that binary on a distroless base (glibc, CA roots,
# time zones, no shell), runs it as a non-root user and keeps everything it writes in /data.
#
#   docker build --build-arg VIGIL_COMMIT="$(git rev-parse --short=12 HEAD)" -t vigil .
#   docker run -d --name vigil -p 8080:8080 -v vigil-data:/data vigil
#
# The build stage runs on the builder's own platform and cross-compiles for the image's
# (TARGETARCH, set by BuildKit), so `docker buildx build --platform linux/amd64,linux/arm64` needs
# no emulation. amd64 gets the baseline build, which also runs on CPUs without AVX2.

FROM --platform=$BUILDPLATFORM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
ARG TARGETARCH
ARG VIGIL_COMMIT=""
RUN arch="${TARGETARCH:-}" \
 && case "$arch" in \
      amd64) name=vigil-linux-x64-baseline ;; \
      arm64) name=vigil-linux-arm64 ;; \
      "") name=vigil ;; \
      *) echo "Vigil has no build for $arch" >&2; exit 1 ;; \
    esac \
 && VIGIL_BUILD_COMMIT="${VIGIL_COMMIT}" node_modules/.bin/bun scripts/build.ts --only "${name}" /out \
 && mv "/out/${name}" /vigil \
 && mkdir /image && mkdir -m 0700 /image/data

FROM gcr.io/distroless/base-nossl-debian12:nonroot
COPY --from=build /vigil /usr/local/bin/vigil
# a named volume starts as a copy of /data: the image's user owns it, and only that user may enter
# it (copied as an entry of its parent folder, so that its mode comes along)
COPY --from=build --chown=nonroot:nonroot /image/ /
USER nonroot
ENV VIGIL_DATA=/data \
    VIGIL_HOST=0.0.0.0 \
    VIGIL_PORT=8080
VOLUME ["/data"]
EXPOSE 8080
# `vigil healthcheck` asks /readyz on VIGIL_PORT: change the port through VIGIL_PORT, not --port,
# so that the check follows
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["/usr/local/bin/vigil", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/vigil"]
CMD ["serve", "--data", "/data"]
