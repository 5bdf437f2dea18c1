#!/bin/sh
# An output file's folder, owned by another user, swapped for a link while joj runs.
#
# usage (as root): output_parent_swap.sh JOJ WORK [USER]
#
# WORK/bob (owned by USER, default nobody) holds d/; WORK/rootonly (0700 root) holds
# precious.json. Root runs `joj bench -n ${N:-1500} --save WORK/bob/d/precious.json --force`; one
# second in, USER moves d away and puts a link d -> WORK/rootonly in its place. joj checked
# --save before the run, then stages and renames the result by path: it replaces
# WORK/rootonly/precious.json (exit 0). Without --force it makes a new file there.
# Also with `joj report … -o`, `joj trace import -o`, `joj compare --save`, `joj device calibrate -o`.
set -u
JOJ=$1; W=$2; U=${3:-nobody}
rm -rf "$W/bob" "$W/rootonly"
mkdir -p "$W/bob/d" "$W/rootonly"
chown -R "$U" "$W/bob"; chmod 700 "$W/rootonly"
echo '{"precious": true}' > "$W/rootonly/precious.json"
"$JOJ" bench -n ${N:-1500} --save "$W/bob/d/precious.json" --force > /dev/null &
pid=$!
sleep 1
runuser -u "$U" -- sh -c "mv '$W/bob/d' '$W/bob/d.old' && ln -s '$W/rootonly' '$W/bob/d'"
wait $pid; echo "joj exit $?"
echo "WORK/rootonly/precious.json now:"; head -c 200 "$W/rootonly/precious.json"; echo
