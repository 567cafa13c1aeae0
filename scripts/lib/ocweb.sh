# Sourced by scripts/test: provides ownCloud Web's bundle, built from its
# source at a pinned tag, for TestOwnCloudWebJourneys. It is built once
# (about 3.5 minutes) and kept in the user's cache. A machine that cannot
# reach the source gets OWNCLOUD_WEB_UNAVAILABLE with the reason, which the
# test prints when it skips.

OWNCLOUD_WEB_TAG=v12.5.0
OWNCLOUD_WEB_REPO=https://github.com/owncloud/web
OWNCLOUD_WEB_PNPM=pnpm@10.33.3

# provide_owncloud_web exports OWNCLOUD_WEB_BUNDLE, or
# OWNCLOUD_WEB_UNAVAILABLE when the source cannot be fetched.
provide_owncloud_web() {
	if [ -n "${OWNCLOUD_WEB_BUNDLE:-}" ] && [ -f "$OWNCLOUD_WEB_BUNDLE/index.html" ]; then
		return
	fi
	local cache="${XDG_CACHE_HOME:-$HOME/.cache}/davspaces/owncloud-web-$OWNCLOUD_WEB_TAG"
	if [ ! -f "$cache/index.html" ]; then
		build_owncloud_web "$cache" || return 0
	fi
	export OWNCLOUD_WEB_BUNDLE="$cache"
}

# build_owncloud_web builds Web's dist/ into $1; it fails only where the
# source cannot be fetched, and says so in OWNCLOUD_WEB_UNAVAILABLE.
build_owncloud_web() {
	local dest="$1" src
	src=$(mktemp -d)
	echo "building ownCloud Web $OWNCLOUD_WEB_TAG (once; kept in $dest)"
	if ! timeout 300 git clone -q --depth 1 -b "$OWNCLOUD_WEB_TAG" "$OWNCLOUD_WEB_REPO" "$src/web"; then
		rm -rf "$src"
		export OWNCLOUD_WEB_UNAVAILABLE="$OWNCLOUD_WEB_REPO cannot be cloned from this machine"
		echo "ownCloud Web: $OWNCLOUD_WEB_UNAVAILABLE; TestOwnCloudWebJourneys will be skipped" >&2
		return 1
	fi
	if ! (cd "$src/web" &&
		npx -y "$OWNCLOUD_WEB_PNPM" install --frozen-lockfile --reporter=silent &&
		npx -y "$OWNCLOUD_WEB_PNPM" build >/dev/null); then
		# Not the network: the test then fails for want of the bundle.
		echo "ownCloud Web's build failed" >&2
		rm -rf "$src"
		return 1
	fi
	mkdir -p "$(dirname "$dest")"
	rm -rf "$dest.tmp"
	cp -r "$src/web/dist" "$dest.tmp"
	mv "$dest.tmp" "$dest"
	rm -rf "$src"
}
