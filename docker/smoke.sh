#!/usr/bin/env bash
# The Docker image, built and run where a Docker daemon is reachable: it
# becomes healthy (its HEALTHCHECK, through the ready file), its master
# answers on the published port, and a shipped scenario runs inside it.
# Where there is no daemon it says so and passes: the image is then checked
# only by reading (test/docker/dockerfile.test.ts).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v docker >/dev/null 2>&1; then
  echo "docker image: skipped, no docker command on this machine"
  exit 0
fi
if ! docker info >/dev/null 2>&1; then
  echo "docker image: skipped, no Docker daemon reachable (docker info fails)"
  exit 0
fi

tag="clustersim-smoke:$$"
name="clustersim-smoke-$$"
trap 'docker rm -f "$name" >/dev/null 2>&1 || true; docker rmi -f "$tag" >/dev/null 2>&1 || true' EXIT

docker build -q -f docker/Dockerfile -t "$tag" . >/dev/null
docker run -d --name "$name" -p 127.0.0.1::5050 "$tag" up --agents 1 >/dev/null
for _ in $(seq 1 60); do
  status="$(docker inspect --format '{{.State.Health.Status}}' "$name")"
  [ "$status" = healthy ] && break
  sleep 1
done
if [ "$status" != healthy ]; then
  echo "docker image: the container is $status after 60 s"; docker logs "$name"; exit 1
fi
port="$(docker port "$name" 5050/tcp | head -n1 | sed 's/.*://')"
node -e "fetch('http://127.0.0.1:$port/master/slaves').then((r) => r.json()).then((b) => process.exit(b.slaves.length === 1 ? 0 : 1))"
docker run --rm "$tag" run scenarios/steady-state.yaml >/dev/null
echo "docker image: built, healthy, serving on 127.0.0.1:$port, and ran scenarios/steady-state.yaml"
