// joj's BPF observer of opens (docs/measurement.md, "Opens seen by BPF"): every open of the
// command's tasks, with its path as the task gave it, the flags, the descriptor it returned
// and the file that descriptor names (device, inode, mode), read in the kernel at the call's
// exit — so an open needs no stop; every change of working directory (chdir, fchdir), so
// that a relative path of a task that has ended by the time joj reads it is still resolved;
// and, on the ext4 filesystem joj traces (`freed_dev`), every unlink with the inode it
// unlinked (`ext4_unlink_enter`, inside the call), every extent a file gives up
// (`ext4_remove_blocks`, as it frees it) and every inode freed (`ext4_free_inode`) — so an
// unlink needs no stop either: the blocks a file held are known as they are freed. Loaded by joj-linux's `bpf_opens` (aya);
// compiled by build.rs with clang -target bpf.
//
// Invariants: only tasks in `tasks` are seen (the command's root, put there before it runs,
// and whatever it forks, added here at the fork, before the child runs); every open of a seen
// task that returns yields exactly one record, or one count in `lost` — never silence; a
// path is read at the exit (at the entry its page may not be faulted in yet, and a BPF
// program cannot fault it in).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

// The kernel's structures, only the fields read here: their offsets are the running kernel's,
// relocated at load time from its BTF (CO-RE), not this file's.
struct super_block { unsigned int s_dev; } __attribute__((preserve_access_index));
struct inode { unsigned short i_mode; unsigned long i_ino; struct super_block *i_sb; } __attribute__((preserve_access_index));
struct file { struct inode *f_inode; } __attribute__((preserve_access_index));
struct fdtable { unsigned int max_fds; struct file **fd; } __attribute__((preserve_access_index));
struct files_struct { struct fdtable *fdt; } __attribute__((preserve_access_index));
struct dentry { struct inode *d_inode; } __attribute__((preserve_access_index));
struct path { void *mnt; struct dentry *dentry; } __attribute__((preserve_access_index));
struct fs_struct { struct path pwd; } __attribute__((preserve_access_index));
struct task_struct { int pid; struct files_struct *files; struct fs_struct *fs; } __attribute__((preserve_access_index));

// The records the tracepoints hand a program (each event's `format` in tracefs). A program may
// read no further than its record: the kernel refuses to attach one that would.
struct sys_enter { unsigned long long common; long nr; unsigned long args[6]; };
struct sys_exit { unsigned long long common; long nr; long ret; };
#define PATH_BYTES 4096
enum call { OPENAT = 1, OPEN = 2, CREAT = 3, OPENAT2 = 4, CHDIR = 5, FCHDIR = 6, UNLINK = 7, UNLINKAT = 8, FREED = 9, INODE_FREED = 10 };
// What user space reads (bpf_opens.rs parses it at these offsets): 72 bytes, then the path.
// FREED (ext4_remove_blocks): ino, dev; flags = the first physical block freed, cwd_ino = its
// logical block, ret = the blocks freed; no path. INODE_FREED (ext4_free_inode): ino, dev.
struct open_record {
  unsigned long long enter_ns, exit_ns;  // 0, 8: CLOCK_MONOTONIC
  long long ret;                         // 16: the descriptor, or -errno
  unsigned long long flags;              // 24: the open's flags (openat2: open_how.flags)
  unsigned long long ino, cwd_ino;       // 32, 40 (chdir, fchdir: ino, dev are the working
                                         // directory's before the call, cwd_* after it;
                                         // unlink: the inode ext4 unlinked, 0 if none)
  int dirfd;                             // 48 (fchdir: its descriptor)
  unsigned int tid;                      // 52
  unsigned int dev, cwd_dev;             // 56, 60: the kernel's dev_t (major << 20 | minor)
  unsigned short mode;                   // 64: i_mode of the opened file (0: not read)
  unsigned short path_len;               // 66: bytes of the path, no NUL; 0xffff: unreadable
  unsigned int call;                     // 68
  char path[PATH_BYTES];                 // 72
};
_Static_assert(__builtin_offsetof(struct open_record, path) == 72, "open_record: path at 72");

// Set by the loader: the device (kernel dev_t) of the ext4 filesystem whose unlinks and freed
// blocks are recorded; 0: none.
volatile const unsigned int freed_dev = 0;

struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 65536); __type(key, int); __type(value, int); } tasks SEC(".maps");
struct entered { unsigned long long ns; unsigned long dirfd, path, flags, cwd_ino; unsigned int call, cwd_dev; };
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 65536); __type(key, int); __type(value, struct entered); } entered SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); __uint(max_entries, 1); __type(key, int); __type(value, struct open_record); } scratch SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_RINGBUF); __uint(max_entries, 1 << 24); } opens SEC(".maps");
// lost[0]: records the ring had no room for; lost[1]: tasks or entered calls the maps had no
// room for (their opens are then not seen).
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 2); __type(key, int); __type(value, unsigned long long); } lost SEC(".maps");

static __always_inline void count_lost(int which) {
  unsigned long long *n = bpf_map_lookup_elem(&lost, &which);
  if (n) __sync_fetch_and_add(n, 1);
}

// Raw tracepoints: their arguments are the kernel's own (task pointers), read with CO-RE, where
// a tracepoint's record lays its fields out differently from one kernel to another (the comm
// fields of sched_process_fork became __data_loc, moving child_pid from 44 to 20).
// sched_process_fork(struct task_struct *parent, struct task_struct *child), in the parent.
SEC("raw_tracepoint/sched_process_fork") int task_forked(struct bpf_raw_tracepoint_args *ctx) {
  int tid = (int)bpf_get_current_pid_tgid();
  if (!bpf_map_lookup_elem(&tasks, &tid)) return 0;
  struct task_struct *child = (struct task_struct *)ctx->args[1];
  int pid = BPF_CORE_READ(child, pid), one = 1;
  if (bpf_map_update_elem(&tasks, &pid, &one, BPF_ANY)) count_lost(1);
  return 0;
}

// sched_process_exec(struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm): a thread
// other than the leader that execs takes the leader's pid; the leader's exit has removed it.
SEC("raw_tracepoint/sched_process_exec") int task_execed(struct bpf_raw_tracepoint_args *ctx) {
  int old = (int)ctx->args[1];
  if (!bpf_map_lookup_elem(&tasks, &old)) return 0;
  struct task_struct *p = (struct task_struct *)ctx->args[0];
  int pid = BPF_CORE_READ(p, pid), one = 1;
  bpf_map_delete_elem(&tasks, &old);
  if (bpf_map_update_elem(&tasks, &pid, &one, BPF_ANY)) count_lost(1);
  return 0;
}

SEC("tracepoint/sched/sched_process_exit") int task_exited(void *c) {
  int tid = (int)bpf_get_current_pid_tgid();
  bpf_map_delete_elem(&tasks, &tid);
  bpf_map_delete_elem(&entered, &tid);
  return 0;
}

static __always_inline int enter(unsigned int call, unsigned long dirfd, unsigned long path, unsigned long flags) {
  int tid = (int)bpf_get_current_pid_tgid();
  if (!bpf_map_lookup_elem(&tasks, &tid)) return 0;
  struct entered k = { bpf_ktime_get_ns(), dirfd, path, flags, 0, call, 0 };
  if (call == CHDIR || call == FCHDIR) {
    struct task_struct *t = (struct task_struct *)bpf_get_current_task();
    struct inode *cwd = BPF_CORE_READ(t, fs, pwd.dentry, d_inode);
    k.cwd_ino = BPF_CORE_READ(cwd, i_ino);
    k.cwd_dev = BPF_CORE_READ(cwd, i_sb, s_dev);
  }
  if (bpf_map_update_elem(&entered, &tid, &k, BPF_ANY)) count_lost(1);
  return 0;
}

static __always_inline int exited(long ret) {
  int tid = (int)bpf_get_current_pid_tgid();
  struct entered *k = bpf_map_lookup_elem(&entered, &tid);
  if (!k) return 0;
  int zero = 0;
  struct open_record *e = bpf_map_lookup_elem(&scratch, &zero);
  if (!e) { bpf_map_delete_elem(&entered, &tid); return 0; }
  e->enter_ns = k->ns; e->exit_ns = bpf_ktime_get_ns(); e->ret = ret; e->dirfd = (int)k->dirfd;
  e->tid = tid; e->call = k->call; e->flags = k->flags;
  e->ino = 0; e->dev = 0; e->mode = 0;
  if (k->call == OPENAT2) {
    // open_how.flags, the struct's first field (a u64), read where the task passed it.
    unsigned long long f = 0;
    // Unreadable: taken as an open that may write (O_RDWR), never as the pointer.
    e->flags = bpf_probe_read_user(&f, sizeof f, (const void *)k->flags) == 0 ? f : 02;
  }
  long n = k->path ? bpf_probe_read_user_str(e->path, PATH_BYTES, (const void *)k->path) : 0;
  e->path_len = n > 0 ? (unsigned short)((n - 1) & (PATH_BYTES - 1)) : 0xffff;
  struct task_struct *t = (struct task_struct *)bpf_get_current_task();
  if (k->call == CHDIR || k->call == FCHDIR || k->call == UNLINK || k->call == UNLINKAT) {
    e->ino = k->cwd_ino; e->dev = k->cwd_dev;
  } else if (ret >= 0) {
    struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
    unsigned int max = BPF_CORE_READ(fdt, max_fds);
    if ((unsigned long)ret < max) {
      struct file **fds = BPF_CORE_READ(fdt, fd);
      struct file *f = 0;
      bpf_probe_read_kernel(&f, sizeof f, &fds[ret]);
      if (f) {
        struct inode *i = BPF_CORE_READ(f, f_inode);
        e->ino = BPF_CORE_READ(i, i_ino);
        e->mode = BPF_CORE_READ(i, i_mode);
        e->dev = BPF_CORE_READ(i, i_sb, s_dev);
      }
    }
  }
  struct inode *cwd = BPF_CORE_READ(t, fs, pwd.dentry, d_inode);
  e->cwd_ino = BPF_CORE_READ(cwd, i_ino);
  e->cwd_dev = BPF_CORE_READ(cwd, i_sb, s_dev);
  unsigned long size = 72 + (e->path_len == 0xffff ? 0 : e->path_len);
  if (size > sizeof(*e)) size = sizeof(*e);
  // Never wakes the reader: joj's events thread drains on its own clock.
  if (bpf_ringbuf_output(&opens, e, size, BPF_RB_NO_WAKEUP)) count_lost(0);
  bpf_map_delete_elem(&entered, &tid);
  return 0;
}

// ext4's own events, of the traced filesystem only. dev 8, ino 16 in each record.
struct ext4_unlink_record { unsigned long long common; unsigned int dev; unsigned long ino; unsigned long parent; long long size; };
struct ext4_remove_record { unsigned long long common; unsigned int dev; unsigned long ino; unsigned int from, to; unsigned long long ee_pblk; unsigned int ee_lblk; unsigned short ee_len; };
_Static_assert(__builtin_offsetof(struct ext4_remove_record, ee_pblk) == 32, "ext4_remove_blocks: ee_pblk at 32");
_Static_assert(__builtin_offsetof(struct ext4_remove_record, ee_lblk) == 40, "ext4_remove_blocks: ee_lblk at 40");
struct ext4_free_inode_record { unsigned long long common; unsigned int dev; unsigned long ino; };

// Inside an unlink of a watched task: the inode it unlinks (the first, if ext4 unlinks more).
SEC("tracepoint/ext4/ext4_unlink_enter") int ext4_unlinked(struct ext4_unlink_record *c) {
  if (!freed_dev || c->dev != freed_dev) return 0;
  int tid = (int)bpf_get_current_pid_tgid();
  struct entered *k = bpf_map_lookup_elem(&entered, &tid);
  if (!k || (k->call != UNLINK && k->call != UNLINKAT) || k->cwd_ino) return 0;
  k->cwd_ino = c->ino; k->cwd_dev = c->dev;
  return 0;
}

static __always_inline void ext4_record(unsigned int call, unsigned int dev, unsigned long ino,
                                        unsigned long long pblk, unsigned long lblk, long blocks) {
  int zero = 0;
  struct open_record *e = bpf_map_lookup_elem(&scratch, &zero);
  if (!e) return;
  e->enter_ns = e->exit_ns = bpf_ktime_get_ns(); e->ret = blocks; e->flags = pblk; e->ino = ino;
  e->cwd_ino = lblk; e->dirfd = 0; e->tid = (int)bpf_get_current_pid_tgid(); e->dev = dev;
  e->cwd_dev = 0; e->mode = 0; e->path_len = 0xffff; e->call = call;
  if (bpf_ringbuf_output(&opens, e, 72, BPF_RB_NO_WAKEUP)) count_lost(0);
}

// Any task's: a file unlinked while open gives its blocks up at its last close, maybe in
// another process (the classifier needs them wherever they are freed).
SEC("tracepoint/ext4/ext4_remove_blocks") int ext4_freed(struct ext4_remove_record *c) {
  if (!freed_dev || c->dev != freed_dev || c->to < c->from || c->from < c->ee_lblk) return 0;
  ext4_record(FREED, c->dev, c->ino, c->ee_pblk + (c->from - c->ee_lblk), c->from, (long)c->to - c->from + 1);
  return 0;
}

SEC("tracepoint/ext4/ext4_free_inode") int ext4_inode_freed(struct ext4_free_inode_record *c) {
  if (!freed_dev || c->dev != freed_dev) return 0;
  ext4_record(INODE_FREED, c->dev, c->ino, 0, 0, 0);
  return 0;
}

SEC("tracepoint/syscalls/sys_enter_openat") int openat_enter(struct sys_enter *c) { return enter(OPENAT, c->args[0], c->args[1], c->args[2]); }
SEC("tracepoint/syscalls/sys_exit_openat") int openat_exit(struct sys_exit *c) { return exited(c->ret); }
SEC("tracepoint/syscalls/sys_enter_openat2") int openat2_enter(struct sys_enter *c) { return enter(OPENAT2, c->args[0], c->args[1], c->args[2]); }
SEC("tracepoint/syscalls/sys_exit_openat2") int openat2_exit(struct sys_exit *c) { return exited(c->ret); }
SEC("tracepoint/syscalls/sys_enter_unlinkat") int unlinkat_enter(struct sys_enter *c) { return freed_dev ? enter(UNLINKAT, c->args[0], c->args[1], c->args[2]) : 0; }
SEC("tracepoint/syscalls/sys_exit_unlinkat") int unlinkat_exit(struct sys_exit *c) { return exited(c->ret); }
SEC("tracepoint/syscalls/sys_enter_chdir") int chdir_enter(struct sys_enter *c) { return enter(CHDIR, (unsigned long)-100, c->args[0], 0); }
SEC("tracepoint/syscalls/sys_exit_chdir") int chdir_exit(struct sys_exit *c) { return exited(c->ret); }
SEC("tracepoint/syscalls/sys_enter_fchdir") int fchdir_enter(struct sys_enter *c) { return enter(FCHDIR, c->args[0], 0, 0); }
SEC("tracepoint/syscalls/sys_exit_fchdir") int fchdir_exit(struct sys_exit *c) { return exited(c->ret); }
#if defined(__TARGET_ARCH_x86)
SEC("tracepoint/syscalls/sys_enter_open") int open_enter(struct sys_enter *c) { return enter(OPEN, (unsigned long)-100, c->args[0], c->args[1]); }
SEC("tracepoint/syscalls/sys_exit_open") int open_exit(struct sys_exit *c) { return exited(c->ret); }
SEC("tracepoint/syscalls/sys_enter_creat") int creat_enter(struct sys_enter *c) { return enter(CREAT, (unsigned long)-100, c->args[0], 01 | 0100 | 01000); }
SEC("tracepoint/syscalls/sys_exit_creat") int creat_exit(struct sys_exit *c) { return exited(c->ret); }
SEC("tracepoint/syscalls/sys_enter_unlink") int unlink_enter(struct sys_enter *c) { return freed_dev ? enter(UNLINK, (unsigned long)-100, c->args[0], 0) : 0; }
SEC("tracepoint/syscalls/sys_exit_unlink") int unlink_exit(struct sys_exit *c) { return exited(c->ret); }
#endif

char LICENSE[] SEC("license") = "GPL";
