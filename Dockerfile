# opsagent: one static binary on a distroless base, run as non-root, data in /data.
#   docker build -t opsagent .
#   docker run -d -p 8080:8080 -v opsagent-data:/data -e OPSAGENT_BASE_URL=https://opsagent.example.com opsagent
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/opsagent . \
 && mkdir -p /out/data

# distroless/static: CA certificates and tzdata, no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/opsagent /usr/local/bin/opsagent
# The volume's mount point belongs to the unprivileged user (65532, "nonroot").
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV OPSAGENT_ADDR=0.0.0.0:8080 \
    OPSAGENT_DATA_DIR=/data \
    OPSAGENT_LOG_FORMAT=json
VOLUME ["/data"]
EXPOSE 8080
# Probes: GET /healthz (alive) and GET /readyz (ready); there is no shell for a HEALTHCHECK command.
ENTRYPOINT ["/usr/local/bin/opsagent"]
CMD ["serve"]
