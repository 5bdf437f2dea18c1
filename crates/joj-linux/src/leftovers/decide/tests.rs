//! The sweep's decisions on made-up machines.

use super::*;

const DEAD: u32 = 12345;
const LIVE: u32 = 777;

fn liveness(pid: u32) -> Liveness {
    if pid == LIVE {
        Liveness::Alive {
            command: "joj".into(),
        }
    } else {
        Liveness::Dead
    }
}

/// A machine where `pid` left a traced ext4 run: instance, mount, loop device, scratch
/// directory, plus a host run's temporary directory.
fn run_of(pid: u32) -> Seen {
    Seen {
        run_dir: "/run/joj".into(),
        scratch_dirs: vec![format!("ext4-{pid}-aB3dE6")],
        mounts: vec![format!("/run/joj/ext4-{pid}-aB3dE6/mnt").into()],
        loops: vec![(
            3,
            format!("/run/joj/ext4-{pid}-aB3dE6/ext4-{pid}-main-Qw3rTy.img").into(),
        )],
        instances_dir: "/sys/kernel/tracing/instances".into(),
        trace_instances: vec![format!("joj-{pid}-0")],
        temp_root: "/tmp".into(),
        temp_dirs: vec![TempEntry {
            name: format!("joj-{pid}-XyZ123"),
            owner_uid: 0,
            mode: 0o700,
        }],
        euid: 0,
        other_pid_namespace: None,
    }
}

fn merge(mut a: Seen, b: Seen) -> Seen {
    a.scratch_dirs.extend(b.scratch_dirs);
    a.mounts.extend(b.mounts);
    a.loops.extend(b.loops);
    a.trace_instances.extend(b.trace_instances);
    a.temp_dirs.extend(b.temp_dirs);
    a
}

#[test]
fn a_dead_runs_things_are_removed_instance_first_directories_last() {
    let d = decide(&run_of(DEAD), liveness);
    let resources: Vec<_> = d.remove.iter().map(|l| l.resource.clone()).collect();
    assert_eq!(
        resources,
        vec![
            Resource::TraceInstance("/sys/kernel/tracing/instances/joj-12345-0".into()),
            Resource::Mount("/run/joj/ext4-12345-aB3dE6/mnt".into()),
            Resource::Loop {
                index: 3,
                backing: "/run/joj/ext4-12345-aB3dE6/ext4-12345-main-Qw3rTy.img".into()
            },
            Resource::ScratchDir("/run/joj/ext4-12345-aB3dE6".into()),
            Resource::TempDir("/tmp/joj-12345-XyZ123".into()),
        ]
    );
    assert!(d.remove.iter().all(|l| l.pid == DEAD));
    assert!(d.keep.is_empty());
}

#[test]
fn a_live_processs_things_are_kept_and_said_to_be() {
    let d = decide(&merge(run_of(DEAD), run_of(LIVE)), liveness);
    assert!(d.remove.iter().all(|l| l.pid == DEAD));
    assert_eq!(d.remove.len(), 5);
    assert_eq!(d.keep.len(), 1);
    assert_eq!((d.keep[0].pid, d.keep[0].command.as_str()), (LIVE, "joj"));
    assert_eq!(d.keep[0].resources.len(), 5);
}

#[test]
fn liveness_is_asked_once_per_pid() {
    let mut asked = Vec::new();
    decide(&merge(run_of(DEAD), run_of(LIVE)), |pid| {
        asked.push(pid);
        liveness(pid)
    });
    assert_eq!(asked, vec![LIVE, DEAD]);
}

#[test]
fn things_not_named_as_joj_names_them_are_not_considered() {
    let seen = Seen {
        run_dir: "/run/joj".into(),
        scratch_dirs: vec!["notes".into(), "ext4-abc-aB3dE6".into()],
        mounts: vec![
            "/run/joj".into(),
            "/mnt/ext4-12345-aB3dE6".into(),
            "/run/jojx/ext4-12345-aB3dE6/mnt".into(),
        ],
        loops: vec![
            (0, "/var/lib/images/disk.img".into()),
            (1, "/run/joj/notes/main.img".into()),
        ],
        instances_dir: "/sys/kernel/tracing/instances".into(),
        trace_instances: vec!["perf".into(), "joj-12345".into(), "joj-x-0".into()],
        temp_root: "/tmp".into(),
        temp_dirs: vec![
            TempEntry {
                name: "joj-4TUTHn".into(),
                owner_uid: 0,
                mode: 0o700,
            },
            TempEntry {
                name: "joj-out".into(),
                owner_uid: 0,
                mode: 0o755,
            },
        ],
        euid: 0,
        other_pid_namespace: None,
    };
    assert_eq!(decide(&seen, liveness), Decision::default());
}

#[test]
fn a_temporary_directory_of_another_user_or_not_private_is_not_ours() {
    let mut seen = run_of(DEAD);
    seen.temp_dirs = vec![
        TempEntry {
            name: format!("joj-{DEAD}-AbCdEf"),
            owner_uid: 1000,
            mode: 0o700,
        },
        TempEntry {
            name: format!("joj-{DEAD}-result"),
            owner_uid: 0,
            mode: 0o755,
        },
    ];
    let d = decide(&seen, liveness);
    assert!(
        !d.remove
            .iter()
            .any(|l| matches!(l.resource, Resource::TempDir(_)))
    );
}

#[test]
fn a_crash_copy_and_a_deleted_image_are_found_by_their_directory_and_name() {
    let seen = Seen {
        run_dir: "/run/joj".into(),
        scratch_dirs: vec![format!("xfs-{DEAD}-crash-Zz0000")],
        mounts: vec![format!("/run/joj/xfs-{DEAD}-crash-Zz0000/mnt").into()],
        loops: vec![
            (
                5,
                format!("/run/joj/xfs-{DEAD}-crash-Zz0000/main.img").into(),
            ),
            (
                6,
                format!("/run/joj/ext4-{DEAD}-aB3dE6/ext4-{DEAD}-main-Qw3rTy.img (deleted)").into(),
            ),
            // A crash copy's name elsewhere says nothing.
            (7, format!("/srv/xfs-{DEAD}-crash-Zz0000/main.img").into()),
            // Nor does an image of joj's name copied out to keep, or one in another pid's
            // scratch directory.
            (8, format!("/srv/keep/ext4-{DEAD}-main-Qw3rTy.img").into()),
            (
                9,
                format!("/run/joj/ext4-{DEAD}-aB3dE6/ext4-1-main-Qw3rTy.img").into(),
            ),
        ],
        ..Seen::default()
    };
    let d = decide(&seen, liveness);
    let loops: Vec<u32> = d
        .remove
        .iter()
        .filter_map(|l| match l.resource {
            Resource::Loop { index, .. } => Some(index),
            _ => None,
        })
        .collect();
    assert_eq!(loops, vec![5, 6]);
    assert_eq!(d.remove.len(), 4);
}

#[test]
fn a_mount_below_another_is_unmounted_first() {
    let seen = Seen {
        run_dir: "/run/joj".into(),
        mounts: vec![
            format!("/run/joj/ext4-{DEAD}-aB3dE6/mnt").into(),
            format!("/run/joj/ext4-{DEAD}-aB3dE6/mnt/inner").into(),
        ],
        ..Seen::default()
    };
    let d = decide(&seen, liveness);
    assert_eq!(
        d.remove[0].resource,
        Resource::Mount(format!("/run/joj/ext4-{DEAD}-aB3dE6/mnt/inner").into())
    );
}

#[test]
fn the_report_has_one_line_per_dead_pid() {
    let d = decide(&merge(run_of(DEAD), run_of(4)), liveness);
    let lines = lines_by_pid("removed leftovers of dead joj", &d.remove);
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with("removed leftovers of dead joj 4: tracefs instance joj-4-0, "));
    assert_eq!(
        lines[1],
        "removed leftovers of dead joj 12345: tracefs instance joj-12345-0, \
         /run/joj/ext4-12345-aB3dE6/mnt (mount), /dev/loop3, \
         /run/joj/ext4-12345-aB3dE6 (images and directory), \
         /tmp/joj-12345-XyZ123 (temporary directory)"
    );
}

/// What a dead run of pid 12345 with these scratch directories (in `/run/joj`), mounts and
/// `/dev/loop3` over `image` leaves, in the order it is removed.
fn removal_order_of(dirs: &[&str], mounts: &[&str], image: &str) -> Vec<Resource> {
    let seen = Seen {
        run_dir: "/run/joj".into(),
        scratch_dirs: dirs.iter().map(|d| d.to_string()).collect(),
        mounts: mounts.iter().map(PathBuf::from).collect(),
        loops: vec![(3, image.into())],
        ..Seen::default()
    };
    decide(&seen, liveness)
        .remove
        .iter()
        .map(|l| l.resource.clone())
        .collect()
}

#[test]
fn a_recording_disk_is_unmounted_after_the_loop_devices_on_its_images() {
    let resources = removal_order_of(
        &["ext4-12345-aB3dE6", "rec-12345-Zx9Yw8"],
        &[
            "/run/joj/rec-12345-Zx9Yw8",
            "/run/joj/ext4-12345-aB3dE6/mnt",
        ],
        "/run/joj/rec-12345-Zx9Yw8/ext4-12345-main-Qw3rTy.img",
    );
    assert_eq!(
        resources,
        vec![
            Resource::Mount("/run/joj/ext4-12345-aB3dE6/mnt".into()),
            Resource::Loop {
                index: 3,
                backing: "/run/joj/rec-12345-Zx9Yw8/ext4-12345-main-Qw3rTy.img".into()
            },
            Resource::RecordingMount("/run/joj/rec-12345-Zx9Yw8".into()),
            Resource::ScratchDir("/run/joj/ext4-12345-aB3dE6".into()),
            Resource::ScratchDir("/run/joj/rec-12345-Zx9Yw8".into()),
        ]
    );
    // Another pid's image on the disk, a mount below it and a crash image on it are not ours.
    let stray = Seen {
        run_dir: "/run/joj".into(),
        mounts: vec!["/run/joj/rec-12345-Zx9Yw8/sub".into()],
        loops: vec![
            (
                4,
                "/run/joj/rec-12345-Zx9Yw8/ext4-999-main-Qw3rTy.img".into(),
            ),
            (5, "/run/joj/rec-12345-Zx9Yw8/main.img".into()),
        ],
        ..Seen::default()
    };
    assert!(decide(&stray, liveness).remove.is_empty());
}

#[test]
fn a_scratch_directory_s_tmpfs_is_unmounted_after_the_loop_devices_on_its_images() {
    let resources = removal_order_of(
        &["ext4-12345-aB3dE6"],
        &[
            "/run/joj/ext4-12345-aB3dE6",
            "/run/joj/ext4-12345-aB3dE6/mnt",
        ],
        "/run/joj/ext4-12345-aB3dE6/ext4-12345-main-Qw3rTy.img",
    );
    assert_eq!(
        resources,
        vec![
            Resource::Mount("/run/joj/ext4-12345-aB3dE6/mnt".into()),
            Resource::Loop {
                index: 3,
                backing: "/run/joj/ext4-12345-aB3dE6/ext4-12345-main-Qw3rTy.img".into()
            },
            Resource::ScratchMemory("/run/joj/ext4-12345-aB3dE6".into()),
            Resource::ScratchDir("/run/joj/ext4-12345-aB3dE6".into()),
        ]
    );
}
