#!/usr/bin/env bash
# Make sure `java` >= 17 is on PATH for the Spark tests (pyspark 4.x runs on Java 17).
# When it is missing or older and we are root on Debian/Ubuntu, install openjdk-17-jre-headless with apt-get.
set -euo pipefail

MIN_MAJOR=17
PKG=openjdk-17-jre-headless

java_major() {
    command -v java >/dev/null 2>&1 || { echo 0; return; }
    local v
    # `openjdk version "17.0.15" 2025-04-15` -> 17.0.15 ; `java version "1.8.0_392"` -> 1.8.0_392
    v=$(java -version 2>&1 | awk -F'"' '/version/ { print $2; exit }')
    case "$v" in 1.*) v=${v#1.} ;; esac
    v=${v%%[!0-9]*}
    echo "${v:-0}"
}

major=$(java_major)
if [ "$major" -ge "$MIN_MAJOR" ]; then
    echo "java: $(java -version 2>&1 | head -n 1)"
    exit 0
fi

if [ "$major" -eq 0 ]; then
    echo "java: not found; the Spark tests need Java ${MIN_MAJOR}+"
else
    echo "java: found Java ${major}; the Spark tests need Java ${MIN_MAJOR}+"
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "java: install ${PKG} (or any JDK/JRE ${MIN_MAJOR}+), or run with SPARK=0 to skip the Spark tests" >&2
    exit 1
fi

echo "java: installing ${PKG} with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Debian's slim images drop man pages; the JRE's postinst still links its man page there.
mkdir -p /usr/share/man/man1
apt-get install -y -qq --no-install-recommends "$PKG" >/dev/null

if [ "$(java_major)" -lt "$MIN_MAJOR" ]; then
    # An older java keeps the `java` alternative: point it at the one just installed.
    jre=$(ls -d /usr/lib/jvm/java-17-openjdk-*/bin/java 2>/dev/null | head -n 1)
    [ -n "$jre" ] && update-alternatives --set java "$jre"
fi
major=$(java_major)
if [ "$major" -lt "$MIN_MAJOR" ]; then
    echo "java: ${PKG} installed but \`java\` is still Java ${major}" >&2
    exit 1
fi
echo "java: $(java -version 2>&1 | head -n 1)"
