#!/usr/bin/python3
"""Forge joj device images whose every checksum holds, and power them on.

usage: image_fuzz.py JOJ WORKDIR PROFILE.json FORMATTED.img COUNT [SEED]

FORMATTED.img is `joj device format --device PROFILE --data oob` of an oob-only profile. Each
forged image keeps its header's geometry and logical pages, and chooses the block table
(programmed pages per block, erase counts), every OOB entry (lpn, seq; its checksum computed
as the device computes it, so recovery trusts it, or a wrong one now and then) and every
checkpoint entry; the header's counts and both checksums are written to match. Each is given
to `joj device inspect --device PROFILE IMG`. Printed: exits other than 0/1, panics, > 8 s,
> 1 GB.
"""
import os
import random
import resource
import struct
import subprocess
import sys
import time

M64 = (1 << 64) - 1


def fnv(b):
    h = 0xcbf29ce484222325
    for x in b:
        h ^= x
        h = (h * 0x100000001b3) & M64
    return h


def page_checksum(lpn, seq):
    K = 0x9E3779B97F4A7C15
    h = ((((lpn << 32) ^ seq) & M64) * K & M64) ^ 0x5851F42D4C957F2D
    h ^= ((seq << 17) | (seq >> 47)) & M64
    h = h * K & M64
    h ^= h >> 32
    return h & 0xFFFFFFFF


def forge(head, rnd):
    (page, ppb, bpp, ppd, dpc, ch, sector, unit) = struct.unpack_from("<8I", head, 16)
    logical = struct.unpack_from("<Q", head, 48)[0]
    blocks = bpp * ppd * dpc * ch
    nonempty = rnd.choice([1, 2, blocks // 2, blocks])
    prog = [0] * blocks
    for b in rnd.sample(range(blocks), nonempty):
        prog[b] = rnd.choice([1, ppb, rnd.randint(0, ppb)])
    body = bytearray()
    for b in range(blocks):
        body += struct.pack("<II", prog[b], rnd.choice([0, 1, 5, 0xFFFFFFFF, rnd.getrandbits(32)]))
    lpns = [0, 1, logical - 1, logical, logical + 1, 0xFFFFFFFE, 0xFFFFFFFF, 0x7FFFFFFF]
    seqs = [0, 1, 2, 3, M64, M64 - 1, 1 << 63, 1 << 32]
    for b in range(blocks):
        for _ in range(prog[b]):
            lpn = rnd.choice(lpns + [rnd.randrange(max(logical, 1))] * 4)
            seq = rnd.choice(seqs + [rnd.getrandbits(64), rnd.randint(0, 50)] * 3)
            cs = page_checksum(lpn, seq) if rnd.random() < 0.9 else rnd.getrandbits(32)
            body += struct.pack("<IIQ", lpn, cs, seq)
    phys = blocks * ppb
    empty_cp = rnd.random() < 0.8
    for _ in range(logical):
        if empty_cp or rnd.random() < 0.97:
            body += struct.pack("<I", 0xFFFFFFFF)
        else:
            body += struct.pack("<I", rnd.choice([0, phys - 1, phys, 0xFFFFFFFE, rnd.randrange(phys)]))
    hdr = bytearray(head[:96])
    struct.pack_into("<Q", hdr, 56, rnd.choice([0, 1, M64, rnd.getrandbits(64)]))  # checkpoint_seq
    struct.pack_into("<Q", hdr, 64, sum(prog))
    struct.pack_into("<Q", hdr, 72, len(body))
    struct.pack_into("<Q", hdr, 80, fnv(body))
    struct.pack_into("<Q", hdr, 88, fnv(hdr[:88]))
    return bytes(hdr) + bytes(body) + b"JOJDEND1"


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def main():
    joj, work, prof, img, count = sys.argv[1:6]
    seed = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    os.makedirs(work, exist_ok=True)
    head = open(img, "rb").read(96)
    for i in range(int(count)):
        rnd = random.Random(seed * 1000003 + i)
        path = os.path.join(work, f"f{seed}-{i}.img")
        open(path, "wb").write(forge(head, rnd))
        t = time.time()
        r = subprocess.run(["/usr/bin/time", "-f", "%M", "timeout", "20", joj, "device", "inspect",
                            "--device", prof, path], capture_output=True, text=True, preexec_fn=limit)
        dt = time.time() - t
        lines = r.stderr.strip().splitlines()
        kb = int(lines[-1]) if lines and lines[-1].isdigit() else -1
        err = " ".join(lines[:-1])
        why = []
        if r.returncode not in (0, 1):
            why.append(f"rc={r.returncode}")
        if "panicked" in err:
            why.append("panic")
        if dt > 8:
            why.append(f"{dt:.1f}s")
        if kb > 1_000_000:
            why.append(f"{kb}KB")
        if why:
            print(path, why, err[-400:], flush=True)
        else:
            os.unlink(path)
    print("done")


main()
