// observer DEV DIR PROGRAM ARGS…: runs PROGRAM in DIR with observer.bpf.o's programs attached
// to it (DEV: the kernel device number whose block requests are taken too, 0 for none; `off`:
// no program at all, the same start, timing and drain loop — the untraced run timed alike); drains
// the ring buffer every 20 ms; prints the program's time (release to exit, ms) on the first
// line and the events it received by kind on the second. An experiment for issue 34 point 7,
// built and run by trace_floor.sh; not part of joj.
#include <bpf/libbpf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct event { unsigned long long ns; unsigned long a; unsigned int kind; unsigned int tid; long n; char path[64]; };
static long counts[16];
static pid_t child;
static volatile double ended;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
static int on_event(void *ctx, void *data, size_t len) {
  (void)ctx; (void)len;
  counts[((struct event *)data)->kind & 15]++;
  return 0;
}
// The exit is timed by a thread of its own, so the 20 ms drain does not round it.
static void *wait_child(void *x) {
  (void)x;
  int status;
  waitpid(child, &status, 0);
  ended = now();
  return 0;
}
int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: observer DEV DIR PROGRAM ARGS...\n"); return 2; }
  int off = !strcmp(argv[1], "off");
  unsigned int dev = off ? 0 : strtoul(argv[1], 0, 10);
  int go[2];
  if (pipe(go)) { perror("observer: pipe"); return 1; }
  child = fork();
  if (child == 0) {
    char x;
    close(go[1]);
    if (read(go[0], &x, 1) != 1) _exit(126);
    if (chdir(argv[2])) { perror("observer: chdir"); _exit(126); }
    execv(argv[3], argv + 3);
    perror("observer: exec");
    _exit(127);
  }
  close(go[0]);
  struct ring_buffer *rb = 0;
  if (off) goto start;
  char obj[4096];
  snprintf(obj, sizeof obj, "%s.bpf.o", argv[0]);
  struct bpf_object *o = bpf_object__open_file(obj, 0);
  struct bpf_map *ro = 0, *m;
  if (o) bpf_object__for_each_map(m, o) if (strstr(bpf_map__name(m), ".rodata")) ro = m;
  size_t size;
  unsigned int *globals = ro ? (unsigned int *)bpf_map__initial_value(ro, &size) : 0;
  if (!globals || size < 8) { fprintf(stderr, "observer: %s has no globals\n", obj); kill(child, 9); return 1; }
  globals[0] = child; globals[1] = dev;  // target_tgid, target_dev: the order observer.bpf.c declares them
  if (bpf_object__load(o)) { fprintf(stderr, "observer: loading %s failed\n", obj); kill(child, 9); return 1; }
  struct bpf_program *p;
  bpf_object__for_each_program(p, o) if (!bpf_program__attach(p)) {
    fprintf(stderr, "observer: attaching %s failed\n", bpf_program__name(p)); kill(child, 9); return 1;
  }
  rb = ring_buffer__new(bpf_map__fd(bpf_object__find_map_by_name(o, "events")), on_event, 0, 0);
  if (!rb) { fprintf(stderr, "observer: no ring buffer\n"); kill(child, 9); return 1; }
start:;
  pthread_t waiter;
  double start = now();
  if (write(go[1], "x", 1) != 1 || pthread_create(&waiter, 0, wait_child, 0)) { kill(child, 9); return 1; }
  while (!ended) { usleep(20000); if (rb) ring_buffer__consume(rb); }
  if (rb) ring_buffer__consume(rb);
  printf("%.0f\n", (ended - start) * 1000);
  printf("write %ld sync %ld/%ld open %ld/%ld close %ld unlink %ld ext4_remove_blocks %ld block_rq_issue %ld block_rq_complete %ld block_bio_queue %ld\n",
         counts[1], counts[2], counts[10], counts[3], counts[11], counts[4], counts[5], counts[6], counts[7], counts[8], counts[9]);
  return 0;
}
