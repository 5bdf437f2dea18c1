#!/usr/bin/env python3
"""A device profile with some fields changed (the i-FTL sensitivity sweeps; once inline in
scripts/iftltable.sh).

Usage: profile_variant.py SRC DST NAME SECTION.FIELD=INT [...]
  e.g. profile_variant.py openssd-iftl.json out.json openssd-iftl-commit5-flush0 \
       ftl.commit_meta_pages=5 ftl.flush_meta_pages=0
"""
import json, sys
src, dst, name, *sets = sys.argv[1:]
p = json.load(open(src))
p["name"] = name
for s in sets:
    key, value = s.split("=", 1)
    section, field = key.split(".", 1)
    p[section][field] = int(value)
json.dump(p, open(dst, "w"), indent=1)
