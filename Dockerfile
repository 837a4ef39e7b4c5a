# chokepoint's image: the release binary, built as CI builds it (cargo --release, Cargo.lock as
# committed), on a slim base. The Kubernetes manifests in deploy/kubernetes/ name this image.
#   docker build -t REGISTRY/chokepoint:VERSION . && docker push REGISTRY/chokepoint:VERSION
FROM rust:1-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin chokepoint \
 && strip target/release/chokepoint

FROM debian:bookworm-slim
COPY --from=build /src/target/release/chokepoint /usr/local/bin/chokepoint
# Not root; the manifests run it as the same user and give the results volume its group.
USER 65532:65532
ENTRYPOINT ["chokepoint"]
CMD ["--help"]
