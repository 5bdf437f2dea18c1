// An experiment for issue 34 point 7 (docs/measurement.md, "A BPF observer"), not part of joj:
// what `joj trace` stops or records per call, seen instead by BPF programs on the kernel's
// tracepoints, each event put in one ring buffer that user space drains every 20 ms — nobody
// stopped, an open's path and an unlink's read in the kernel, and the extents a file gives up
// on ext4 (`ext4_remove_blocks`, at the moment its blocks are freed) instead of a FIEMAP while
// the program waits. Built by trace_floor.sh (clang -target bpf; libbpf-dev's headers).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

// The records the tracepoints hand a program (each event's `format` in tracefs): the common
// header, then the fields. A program may read no further than its event's record.
struct sys_enter { unsigned long long common; long nr; unsigned long args[6]; };
struct sys_exit { unsigned long long common; long nr; long ret; };
struct remove_blocks {  // dev 8, ino 16, from 24, to 28, ee_pblk 32, ee_lblk 40, ee_len 44
  unsigned long long common; unsigned int dev; unsigned long ino; unsigned int from, to;
  unsigned long long ee_pblk; unsigned int ee_lblk; unsigned short ee_len;
};
_Static_assert(__builtin_offsetof(struct remove_blocks, ee_pblk) == 32, "ext4_remove_blocks: ee_pblk at 32");
_Static_assert(__builtin_offsetof(struct remove_blocks, ee_len) == 44, "ext4_remove_blocks: ee_len at 44");
struct blk { unsigned long long common; unsigned int dev; unsigned long long sector; unsigned int nr_sector; };

// Set by the loader before the programs load: the process watched; the scratch filesystem's
// device (its freed extents are taken, no other filesystem's); whether its block requests are
// taken too (0: the block events are tracefs's, as `joj trace` has them).
volatile const int target_tgid = 0;
volatile const unsigned int target_dev = 0;
volatile const int take_blocks = 0;

// Events the ring buffer had no room for: the loader reports them, so "none lost" is a count.
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 1); __type(key, int); __type(value, unsigned long long); } lost SEC(".maps");

struct { __uint(type, BPF_MAP_TYPE_RINGBUF); __uint(max_entries, 1 << 22); } events SEC(".maps");

enum kind { WRITE = 1, SYNC_START, OPEN, CLOSE, UNLINK, REMOVE_BLOCKS, RQ_ISSUE, RQ_COMPLETE, BIO_QUEUE, SYNC_END, OPEN_END };
struct event { unsigned long long ns; unsigned long a, b; unsigned int kind; unsigned int tid; long n; char path[64]; };

static __always_inline struct event *event(enum kind kind, int any_task) {
  unsigned long long pid_tgid = bpf_get_current_pid_tgid();
  if (!any_task && (pid_tgid >> 32) != target_tgid) return 0;
  struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (!e) {
    int zero = 0;
    unsigned long long *n = bpf_map_lookup_elem(&lost, &zero);
    if (n) __sync_fetch_and_add(n, 1);
    return 0;
  }
  e->ns = bpf_ktime_get_ns(); e->kind = kind; e->tid = (unsigned int)pid_tgid;
  e->a = 0; e->b = 0; e->n = 0; e->path[0] = 0;
  return e;
}
// Never wakes the reader: it drains on its own clock, as joj's events thread does.
#define SEND(e) bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP)

#define FD_COUNT(call, kind) SEC("tracepoint/syscalls/sys_enter_" #call) int call##_enter(struct sys_enter *c) { \
  struct event *e = event(kind, 0); if (!e) return 0; e->a = c->args[0]; e->n = c->args[2]; SEND(e); return 0; }
#define FD_ONLY(call, kind) SEC("tracepoint/syscalls/sys_enter_" #call) int call##_enter(struct sys_enter *c) { \
  struct event *e = event(kind, 0); if (!e) return 0; e->a = c->args[0]; SEND(e); return 0; }
#define RETURN(call, kind) SEC("tracepoint/syscalls/sys_exit_" #call) int call##_exit(struct sys_exit *c) { \
  struct event *e = event(kind, 0); if (!e) return 0; e->n = c->ret; SEND(e); return 0; }
// A path is read at the call's exit, not its entry: a program cannot fault a page in, and at the
// entry the string may be in a page the process has not touched yet (seen: one open in each run
// of the app came out empty); by the exit the kernel has copied it, so the page is there.
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 4096); __type(key, unsigned int); __type(value, unsigned long); } pending SEC(".maps");
#define PATH(call, kind, arg) SEC("tracepoint/syscalls/sys_enter_" #call) int call##_enter(struct sys_enter *c) { \
  unsigned long long pid_tgid = bpf_get_current_pid_tgid(); \
  if ((pid_tgid >> 32) != target_tgid) return 0; \
  unsigned int tid = (unsigned int)pid_tgid; unsigned long p = c->args[arg]; \
  bpf_map_update_elem(&pending, &tid, &p, BPF_ANY); return 0; } \
SEC("tracepoint/syscalls/sys_exit_" #call) int call##_exit(struct sys_exit *c) { \
  unsigned int tid = (unsigned int)bpf_get_current_pid_tgid(); \
  unsigned long *p = bpf_map_lookup_elem(&pending, &tid); if (!p) return 0; \
  struct event *e = event(kind, 0); \
  if (e) { bpf_probe_read_user_str(e->path, sizeof e->path, (const void *)*p); e->n = c->ret; SEND(e); } \
  bpf_map_delete_elem(&pending, &tid); return 0; }
#define BLOCK(name, kind) SEC("tracepoint/block/" #name) int name(struct blk *c) { \
  if (!take_blocks || c->dev != target_dev) return 0; \
  struct event *e = event(kind, 1); if (!e) return 0; e->a = c->sector; e->n = c->nr_sector; SEND(e); return 0; }

FD_COUNT(write, WRITE) FD_COUNT(pwrite64, WRITE)
FD_ONLY(fsync, SYNC_START) FD_ONLY(fdatasync, SYNC_START) RETURN(fsync, SYNC_END) RETURN(fdatasync, SYNC_END)
PATH(openat, OPEN, 1)
FD_ONLY(close, CLOSE)
PATH(unlink, UNLINK, 0) PATH(unlinkat, UNLINK, 1)
BLOCK(block_rq_issue, RQ_ISSUE) BLOCK(block_rq_complete, RQ_COMPLETE) BLOCK(block_bio_queue, BIO_QUEUE)

SEC("tracepoint/ext4/ext4_remove_blocks") int remove_blocks(struct remove_blocks *c) {
  if (c->dev != target_dev) return 0;
  struct event *e = event(REMOVE_BLOCKS, 1); if (!e) return 0;
  e->a = c->ino; e->n = c->ee_pblk; e->b = c->ee_len; SEND(e); return 0;
}

char LICENSE[] SEC("license") = "GPL";
