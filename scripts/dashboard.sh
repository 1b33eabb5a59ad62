#!/usr/bin/env bash
# The official RocketMQ Dashboard (apache/rocketmq-dashboard, vendored as source in $DASHBOARD_TARBALL) against rocketq.
#
#   scripts/dashboard.sh build   build it once (npm + Maven) into $CACHE/dashboard-<commit>/; a no-op when cached
#   scripts/dashboard.sh jar     build if needed, then print the jar's path (what the browser tests use)
#   scripts/dashboard.sh run     build if needed, then run it in the foreground against NAMESRV (default
#                                127.0.0.1:9876, the cluster `make run` starts) on PORT (default 8082), data in DATA
#
# The cache lives outside the checkout (~/.cache/rocketq, or $ROCKETQ_CACHE), keyed by the tarball's commit (its
# name), so every worktree and `make test` share one build. The Dashboard runs with its default configuration: only
# the name server address, the HTTP port and its data dir are set (isVIPChannel stays true: it dials listenPort - 2).
# The build is kept small for a shared machine: npm and Maven one at a time, Maven and the Dashboard JVM at -Xmx384m.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DASHBOARD_TARBALL=${DASHBOARD_TARBALL:-$ROOT/../shared/vendor/rocketmq-dashboard-770822bb.tar.gz}
CACHE=${ROCKETQ_CACHE:-$HOME/.cache/rocketq}
NAMESRV=${NAMESRV:-127.0.0.1:9876}
PORT=${PORT:-8082}
NPM_REGISTRY=${NPM_REGISTRY:-https://registry.npmjs.org}

die() { echo "dashboard: $*" >&2; exit 1; }

[ -f "$DASHBOARD_TARBALL" ] || die "no vendored source at $DASHBOARD_TARBALL (set DASHBOARD_TARBALL)"
commit=$(basename "$DASHBOARD_TARBALL" .tar.gz)
commit=${commit##*-}
OUT=$CACHE/dashboard-$commit
JAR=$OUT/rocketmq-dashboard.jar

build() {
    [ -f "$JAR" ] && return 0
    command -v java >/dev/null || die "needs java 17+ (scripts/ensure_java.sh)"
    command -v mvn >/dev/null || die "needs Maven (mvn)"
    command -v npm >/dev/null || die "needs npm"
    mkdir -p "$OUT"
    local src=$OUT/src
    rm -rf "$src" && mkdir -p "$src"
    echo "dashboard: building $commit into $OUT (npm + Maven, a few minutes)" >&2
    tar -xzf "$DASHBOARD_TARBALL" -C "$src"
    local top=$src/rocketmq-dashboard
    # the lock file resolves from a mirror registry that is not reachable here: point it at the public one
    sed -E -i "s#\"resolved\": \"https?://[^/]+/#\"resolved\": \"$NPM_REGISTRY/#" "$top/frontend-new/package-lock.json"
    (cd "$top/frontend-new" && npm ci --no-audit --no-fund --loglevel=error \
        && CI=false GENERATE_SOURCEMAP=false NODE_OPTIONS=--max-old-space-size=1024 npm run build) >&2
    (cd "$top" && MAVEN_OPTS="-Xmx384m" mvn -B -q -T1 -DskipTests -Dskip.installnodenpm -Dskip.npm \
        -Dcheckstyle.skip -Djacoco.skip package) >&2
    local built
    built=$(ls "$top"/target/rocketmq-dashboard-*.jar | grep -v -e sources -e javadoc | head -n 1)
    [ -f "$built" ] || die "Maven produced no jar"
    mv "$built" "$JAR.tmp" && mv "$JAR.tmp" "$JAR"
    rm -rf "$src"
    echo "dashboard: built $JAR" >&2
}

case "${1:-run}" in
build) build ;;
jar) build && echo "$JAR" ;;
run)
    build
    DATA=${DATA:-$OUT/data}
    mkdir -p "$DATA"
    echo "dashboard: http://127.0.0.1:$PORT  (name server $NAMESRV; Ctrl-C stops it)"
    exec java -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -jar "$JAR" --server.port="$PORT" \
        --rocketmq.config.namesrvAddrs="$NAMESRV" --rocketmq.config.dataPath="$DATA"
    ;;
*) die "usage: $0 build|jar|run" ;;
esac
