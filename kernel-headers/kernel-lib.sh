# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Shell functions shared by the kernel scripts (build-deb.sh,
# check-debian-config.sh): the series of a line, a source tree with it
# applied, and the check that configuration fragments survive
# olddefconfig.  Sourced, not run.

# kl_series PDIR: the patches PDIR/series names, in order, into the array
# KL_PATCHES ('#' starts a comment, blank lines are ignored).  Returns 1
# with KL_ERR set if it names none or a file that is not there.
kl_series() {
	local pdir=$1 p

	KL_PATCHES=()
	KL_ERR=
	if [ ! -f "$pdir/series" ]; then
		KL_ERR="$pdir/series missing"
		return 1
	fi
	mapfile -t KL_PATCHES < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' \
				      "$pdir/series" | grep -v '^$' || true)
	if [ ${#KL_PATCHES[@]} = 0 ]; then
		KL_ERR="$pdir/series lists no patch"
		return 1
	fi
	for p in "${KL_PATCHES[@]}"; do
		if [ ! -f "$pdir/$p" ]; then
			KL_ERR="series names $p, which is not in $pdir"
			return 1
		fi
	done
}

# kl_source TARBALL PDIR DEST LOG: unpacks TARBALL into DEST and applies
# the series of PDIR (kl_series) with patch -p1 and zero fuzz: a hunk
# that applies only with fuzz may have landed in the wrong place; offsets
# are fine, rejects and leftovers are not.  Output goes to LOG.  Returns
# 1 with KL_ERR set on failure.
kl_source() {
	local tarball=$1 pdir=$2 dest=$3 log=$4 p

	kl_series "$pdir" || return 1
	if ! timeout 600 tar -xJf "$tarball" -C "$dest" --strip-components=1 \
	     >> "$log" 2>&1; then
		KL_ERR="unpacking $tarball failed"
		return 1
	fi
	kl_apply "$pdir" "$dest" "$log"
}

# kl_apply PDIR DEST LOG: applies the series of PDIR to the tree DEST, as
# kl_source does.  Returns 1 with KL_ERR set on failure.
kl_apply() {
	local pdir=$1 dest=$2 log=$3 p

	kl_series "$pdir" || return 1
	for p in "${KL_PATCHES[@]}"; do
		echo "=== patch -p1 < $p" >> "$log"
		if ! timeout 120 patch -p1 --forward --batch --fuzz=0 \
		     -d "$dest" -i "$pdir/$p" >> "$log" 2>&1; then
			KL_ERR="$p does not apply without fuzz"
			return 1
		fi
	done
	if find "$dest" -name '*.rej' -o -name '*.orig' | grep -q .; then
		KL_ERR="the series left .rej/.orig files"
		return 1
	fi
}

# kl_fragments_kept CONFIG FRAGMENT...: every option a fragment sets or
# unsets must be so in CONFIG after olddefconfig (the local version is
# the caller's).  Prints each that is not, as "FRAGMENT: 'LINE', CONFIG
# has 'WHAT'", and returns 1 if there is one.
kl_fragments_kept() {
	local config=$1 f l o got bad=0

	shift
	for f in "$@"; do
		while IFS= read -r l; do
			case "$l" in
			CONFIG_LOCALVERSION=*|*CONFIG_LOCALVERSION_AUTO*)
				continue ;;
			CONFIG_*=*)
				grep -qxF -- "$l" "$config" && continue
				o=${l%%=*}
				got=$(grep -E "^($o=|# $o is not set)" "$config" ||
				      true) ;;
			"# CONFIG_"*" is not set")
				o=${l#\# }; o=${o%% *}
				grep -q "^$o=" "$config" || continue
				got=$(grep "^$o=" "$config") ;;
			*) continue ;;
			esac
			echo "${f##*/}: '$l', .config has '${got:-nothing}'"
			bad=1
		done < "$f"
	done
	return $bad
}
