// observer MODE DEV DIR PROGRAM ARGS…: runs PROGRAM in DIR with observer.bpf.o's programs
// attached to it. MODE: `calls` (its calls, and the extents ext4 frees on device DEV), `blocks`
// (the same, and DEV's block requests), `off` (no program at all: the same start, timing and
// drain loop — the untraced run timed alike). DEV: the kernel's device number (major << 20 |
// minor) of the filesystem the program writes. Drains the ring buffer every 20 ms. Prints the
// program's time (release to exit, ms) on the first line and what it received on the second;
// exits with the program's status (a program that failed is no run to time). An experiment for
// issue 34 point 7, built and run by trace_floor.sh; not part of joj.
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct event { unsigned long long ns; unsigned long a, b; unsigned int kind; unsigned int tid; long n; char path[64]; };
enum { WRITE = 1, SYNC_START, OPEN, CLOSE, UNLINK, REMOVE_BLOCKS, RQ_ISSUE, RQ_COMPLETE, BIO_QUEUE, SYNC_END, OPEN_END };
static long counts[16], pathless, freed_blocks;
static pid_t child;
static int status;
static volatile double ended;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
static int on_event(void *ctx, void *data, size_t len) {
  (void)ctx; (void)len;
  struct event *e = data;
  counts[e->kind & 15]++;
  if ((e->kind == OPEN || e->kind == UNLINK) && !e->path[0]) pathless++;
  if (e->kind == REMOVE_BLOCKS) freed_blocks += e->b;
  return 0;
}
// The exit is timed by a thread of its own, so the 20 ms drain does not round it.
static void *wait_child(void *x) {
  (void)x;
  waitpid(child, &status, 0);
  ended = now();
  return 0;
}
static int fail(const char *what) {
  fprintf(stderr, "observer: %s\n", what);
  kill(child, SIGKILL);
  waitpid(child, 0, 0);
  return 1;
}
int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: observer off|calls|blocks DEV DIR PROGRAM ARGS...\n"); return 2; }
  int off = !strcmp(argv[1], "off"), blocks = !strcmp(argv[1], "blocks");
  if (!off && !blocks && strcmp(argv[1], "calls")) { fprintf(stderr, "observer: MODE is off, calls or blocks, not '%s'\n", argv[1]); return 2; }
  char *end;
  errno = 0;
  unsigned long dev = strtoul(argv[2], &end, 10);
  if (errno || end == argv[2] || *end || dev == 0 || dev > 0xffffffffUL) { fprintf(stderr, "observer: DEV is a device number, not '%s'\n", argv[2]); return 2; }
  int go[2];
  if (pipe(go)) { perror("observer: pipe"); return 1; }
  child = fork();
  if (child < 0) { perror("observer: fork"); return 1; }
  if (child == 0) {
    char x;
    close(go[1]);
    if (read(go[0], &x, 1) != 1) _exit(126);
    if (chdir(argv[3])) { perror("observer: chdir"); _exit(126); }
    execv(argv[4], argv + 4);
    perror("observer: exec");
    _exit(127);
  }
  close(go[0]);
  struct ring_buffer *rb = 0;
  struct bpf_map *lost = 0;
  if (!off) {
    char obj[4096];
    snprintf(obj, sizeof obj, "%s.bpf.o", argv[0]);
    struct bpf_object *o = bpf_object__open_file(obj, 0);
    struct bpf_map *ro = 0, *m;
    if (!o) return fail("cannot open observer.bpf.o");
    bpf_object__for_each_map(m, o) if (strstr(bpf_map__name(m), ".rodata")) ro = m;
    size_t size;
    int *globals = ro ? (int *)bpf_map__initial_value(ro, &size) : 0;
    if (!globals || size < 12) return fail("observer.bpf.o has no globals");
    // target_tgid, target_dev, take_blocks: the order observer.bpf.c declares them
    globals[0] = child; globals[1] = (int)dev; globals[2] = blocks;
    if (bpf_object__load(o)) return fail("loading observer.bpf.o failed");
    struct bpf_program *p;
    bpf_object__for_each_program(p, o) if (!bpf_program__attach(p)) return fail(bpf_program__name(p));
    rb = ring_buffer__new(bpf_map__fd(bpf_object__find_map_by_name(o, "events")), on_event, 0, 0);
    lost = bpf_object__find_map_by_name(o, "lost");
    if (!rb || !lost) return fail("no ring buffer");
  }
  pthread_t waiter;
  double start = now();
  if (write(go[1], "x", 1) != 1 || pthread_create(&waiter, 0, wait_child, 0)) return fail("cannot start the program");
  while (!ended) { usleep(20000); if (rb) ring_buffer__consume(rb); }
  if (rb) ring_buffer__consume(rb);
  if (!WIFEXITED(status) || WEXITSTATUS(status)) {
    fprintf(stderr, "observer: %s failed (status %d): no run to time\n", argv[4], status);
    return 1;
  }
  int zero = 0;
  unsigned long long dropped = 0;
  if (lost) bpf_map__lookup_elem(lost, &zero, sizeof zero, &dropped, sizeof dropped, 0);
  printf("%.0f\n", (ended - start) * 1000);
  printf("lost %llu; write %ld sync %ld/%ld open %ld close %ld unlink %ld (paths empty: %ld) "
         "ext4_remove_blocks %ld (%ld blocks) block_rq_issue %ld block_rq_complete %ld block_bio_queue %ld\n",
         dropped, counts[WRITE], counts[SYNC_START], counts[SYNC_END], counts[OPEN], counts[CLOSE],
         counts[UNLINK], pathless, counts[REMOVE_BLOCKS], freed_blocks, counts[RQ_ISSUE], counts[RQ_COMPLETE], counts[BIO_QUEUE]);
  return 0;
}
