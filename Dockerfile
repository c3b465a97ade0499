# higmem server image: the static higmem binary on distroless, run as a
# non-root user. Build and run: docs/DOCKER.md. TestDockerfile
# (internal/cli/docker_test.go) checks this file's rules and runs its build
# command.

# Build stage: the Go release go.mod names. The .git directory is part of
# the context, so the go command records the commit (higmem --version).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS=linux
ARG TARGETARCH=amd64
# Pure Go (modernc.org/sqlite): no cgo, so the binary needs no libc and
# cross-compiles for any TARGETOS/TARGETARCH docker buildx asks for.
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -buildvcs=auto -ldflags="-s -w" -o /out/higmem ./cmd/higmem
# An empty /data owned by the run stage's user: a volume mounted there
# starts with this owner, so the server can write its database.
RUN mkdir -p /out/data

# Run stage: the binary only. distroless/static has CA certificates (HTTPS
# LLM endpoints, models fetch), time zones and a nonroot user (65532), and
# no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/higmem /usr/local/bin/higmem
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
# The database, the keys file and the embedding models live in /data: mount
# a volume there.
ENV HIGMEM_DB=/data/higmem.db HIGMEM_MODELS_DIR=/data/models
VOLUME ["/data"]
EXPOSE 8420
ENTRYPOINT ["/usr/local/bin/higmem"]
CMD ["serve", "--addr", "0.0.0.0:8420", "--keys-file", "/data/keys.json"]
