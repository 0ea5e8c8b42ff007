#!/usr/bin/env bash
# Installs Prometheus for the lab's traffic suites (test/cluster/prometheus.ts runs it as a lab process) from Debian's
# own package, only when it is missing: `prometheus` 2.42 on Debian 12. Needs root (CI runs as root) and apt.
# The package's systemd service is stopped and disabled: the lab runs its own instance inside its network namespace,
# with its own config, port and data directory, and a second Prometheus scraping nothing would only cost memory.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-prometheus: prometheus is missing and installing it needs root: apt-get install -y --no-install-recommends prometheus" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# The package lists may be absent (a fresh container) or stale (the pinned version was superseded): update once then.
if ! apt-get install -y --no-install-recommends prometheus; then
  apt-get update
  apt-get install -y --no-install-recommends prometheus
fi
# Only where systemd runs services: containers usually have no systemd, and policy-rc.d already keeps it from starting.
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  systemctl disable --now prometheus.service || true
fi
command -v prometheus >/dev/null
