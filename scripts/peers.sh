#!/usr/bin/env bash
# Builds the reference peers (tests/reference) into $ROCKETQ_PEERS (default ~/.cache/rocketq), for `make peers`.
#
# | peer directory                    | built from                                   | by                              |
# | --------------------------------- | -------------------------------------------- | ------------------------------- |
# | rocketmq-5.5.0/lib                | tests/reference/server/pom.xml               | mvn dependency:copy-dependencies |
# | java4-driver-4.9.8/{classes,lib}  | tests/reference/java4/{pom.xml,src/**.java}  | mvn package + copy-dependencies |
# | java5-driver-5.0.8/{classes,lib}  | tests/reference/java5/{pom.xml,src/**.java}  | mvn package + copy-dependencies |
# | spring-driver-2.3.1/{classes,lib} | tests/reference/spring/{pom.xml,src/**.java} | mvn package + copy-dependencies |
# | go-driver-<module version>/driver | tests/reference/godriver/{go.mod,go.sum,*.go} | go build                       |
#
# Each peer's stamp (`.stamp`, or `driver.stamp` for Go) holds a hash of its inputs' paths and contents, so a peer is
# rebuilt only when what it is built from changed: never because a fresh clone or a worktree gave the same files new
# modification times (a rebuild wipes the directory, which broke reference tests running beside it). Maven's and
# Go's own caches (~/.m2, ~/go/pkg/mod) keep the downloads. Without mvn/java or go the matching tests skip.
set -euo pipefail

REF=tests/reference
PEERS=${ROCKETQ_PEERS:-$HOME/.cache/rocketq}
MVN=(mvn -B -q)

# a short hash of the given files' repository paths and contents, in a fixed order
inputs_hash() {
    local f
    for f in $(printf '%s\n' "$@" | LC_ALL=C sort); do
        printf '%s\n' "$f"
        cat "$f"
    done | sha256sum | cut -c1-16
}

# true when stamp file $1 holds hash $2
fresh() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }

java_sources() { find "$1" -name '*.java'; }

build_server() {
    local dir=$PEERS/rocketmq-5.5.0 pom=$REF/server/pom.xml hash
    hash=$(inputs_hash "$pom")
    fresh "$dir/.stamp" "$hash" && return 0
    echo "make peers: Apache RocketMQ 5.5.0 into $dir"
    rm -rf "$dir"
    "${MVN[@]}" -f "$pom" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dir/lib"
    echo "$hash" >"$dir/.stamp"
}

# $1 = driver directory under tests/reference, $2 = cache directory name
build_java_driver() {
    local src=$REF/$1 dir=$PEERS/$2 hash
    # shellcheck disable=SC2046 # file names in the repo have no spaces
    hash=$(inputs_hash "$src/pom.xml" $(java_sources "$src/src"))
    fresh "$dir/.stamp" "$hash" && return 0
    echo "make peers: $1 driver into $dir"
    rm -rf "$dir"
    "${MVN[@]}" -f "$src/pom.xml" package dependency:copy-dependencies -DincludeScope=runtime \
        -Dpeer.dir="$dir" -DoutputDirectory="$dir/lib"
    echo "$hash" >"$dir/.stamp"
}

build_go_driver() {
    local src=$REF/godriver version dir hash
    version=$(sed -n 's|.*apache/rocketmq-client-go/v2 ||p' "$src/go.mod")
    dir=$PEERS/go-driver-$version
    hash=$(inputs_hash "$src/go.mod" "$src/go.sum" "$src"/*.go)
    [ -x "$dir/driver" ] && fresh "$dir/driver.stamp" "$hash" && return 0
    echo "make peers: Go driver into $dir"
    mkdir -p "$dir"
    (cd "$src" && go build -o "$dir/driver" .)
    echo "$hash" >"$dir/driver.stamp"
}

if command -v mvn >/dev/null 2>&1 && command -v java >/dev/null 2>&1; then
    build_server
    build_java_driver java4 java4-driver-4.9.8
    build_java_driver java5 java5-driver-5.0.8
    build_java_driver spring spring-driver-2.3.1
else
    echo "make peers: mvn or java not found; the Java reference tests will be skipped"
fi
if command -v go >/dev/null 2>&1; then
    build_go_driver
else
    echo "make peers: go not found; the Go reference tests will be skipped"
fi
