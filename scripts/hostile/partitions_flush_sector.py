#!/usr/bin/python3
"""A joj-trace file for `joj replay --partitions` (robustness H120).

partitions_flush_sector.py S OUT  -- two devices; 7:0 writes its sector 0 and flushes with sector S
(0, 2**40, 2**64 - 1); 7:1 reads, then writes, its own sector 0. Replayed with --partitions,
7:1 belongs 1 MiB above 7:0."""
import sys
flush_sector = int(sys.argv[1])
out = sys.argv[2]
def rec(t, dev, op, sector, sectors):
    return ('{"time_ns":%d,"dev":"%s","op":"%s","preflush":false,"fua":false,"sync":true,'
            '"meta":false,"sector":%d,"sectors":%d,"comm":"x","class":"unknown"}\n'
            % (t, dev, op, sector, sectors))
recs = [rec(0, "7:0", "write", 0, 8),
        rec(1, "7:0", "flush", flush_sector, 0),
        rec(2, "7:1", "read", 0, 8),
        rec(3, "7:1", "write", 0, 8)]
with open(out, "w") as f:
    f.write('{"format":"joj-trace","version":1,"records":%d,"clock":"relative","devices":'
            '[{"dev":"7:0","role":"main","name":"a"},{"dev":"7:1","role":"main","name":"b"}],'
            '"source":"tracefs"}\n' % len(recs))
    f.writelines(recs)
