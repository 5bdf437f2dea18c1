//! The `kill -9` harness of the joj-atomic tests: the test binary re-runs one of its own
//! ignored tests as a writer process, serves it the device over a Unix socket
//! (`joj_atomic::serve`), and kills it with SIGKILL right after a chosen device write — inside a
//! transaction, the reply not yet sent.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use std::io::{BufRead, BufReader, Read};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use joj_atomic::{ServeOptions, ServeReport, TxnWrite, serve};
use joj_device::TransactionalDevice;

/// Where the server kills the child: after the `write`-th `write_txn` of its `txn`-th device
/// transaction (1-based).
#[derive(Debug, Clone, Copy)]
pub struct Kill {
    pub txn: u64,
    pub write: u64,
}

/// The writer process to run.
pub struct Child<'a> {
    /// The ignored test that writes until it is killed.
    pub test: &'a str,
    /// The environment variables that tell it the socket and its first transaction.
    pub socket_env: &'a str,
    pub first_env: &'a str,
    pub first: u64,
    /// Abort the child's open transactions when its connection drops (`ServeOptions`).
    pub abort_on_disconnect: bool,
}

/// What one child did.
pub struct Run {
    pub status: ExitStatus,
    pub acked: Vec<u64>,
    pub stderr: String,
    pub report: ServeReport,
    /// The kill point was reached (the server killed the child there).
    pub killed: bool,
}

/// Accept the child's connection; fail clearly if it exits first or never connects.
pub fn accept(listener: &UnixListener, child: &mut std::process::Child) -> UnixStream {
    listener.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).unwrap();
                return s;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("accepting the writer process's connection: {e}"),
        }
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            panic!("the writer process exited ({status}) before connecting:\n{err}");
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("the writer process did not connect within 30 s");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Serve `dev` to a child — this test binary running its ignored test `child.test`, which
/// connects to `socket` and prints `acked N` after each commit — killed at `kill`.
pub fn run_child<D: TransactionalDevice + Send>(
    dev: D,
    socket: &Path,
    child: &Child,
    kill: Kill,
) -> (D, Run) {
    let listener = UnixListener::bind(socket).unwrap();
    let exe = std::env::current_exe().expect("the test binary's own path");
    let spec = child;
    let mut child = Command::new(&exe)
        .args([
            spec.test,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(spec.socket_env, socket)
        .env(spec.first_env, spec.first.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot start the writer process ({} {}): {e}; this test runs its own binary as \
                 the process it kills",
                exe.display(),
                spec.test
            )
        });
    let stream = accept(&listener, &mut child);
    let stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let child = Mutex::new(child);
    let status: Mutex<Option<ExitStatus>> = Mutex::new(None);
    let (dev, report, acked, err) = std::thread::scope(|s| {
        let out = s.spawn(|| {
            BufReader::new(stdout)
                .lines()
                .map(|l| l.unwrap())
                .filter_map(|l| {
                    l.split_once("acked ")
                        .map(|(_, n)| n.parse::<u64>().unwrap())
                })
                .collect::<Vec<u64>>()
        });
        let err = s.spawn(move || {
            let mut e = String::new();
            let _ = stderr.read_to_string(&mut e);
            e
        });
        let server = s.spawn(|| {
            let hook = |w: TxnWrite| {
                if w.txn == kill.txn && w.write == kill.write {
                    // The write ran; its reply is not sent: the child is inside its
                    // transaction. `Child::kill` is SIGKILL on Unix; wait until it is dead.
                    let mut c = child.lock().unwrap();
                    c.kill().unwrap();
                    *status.lock().unwrap() = Some(c.wait().unwrap());
                }
            };
            serve(
                stream,
                dev,
                ServeOptions {
                    abort_on_disconnect: spec.abort_on_disconnect,
                    after_write_txn: Some(Box::new(hook)),
                },
            )
        });
        let (dev, report) = server.join().unwrap();
        (dev, report, out.join().unwrap(), err.join().unwrap())
    });
    let killed = status.lock().unwrap().is_some();
    let status = match status.into_inner().unwrap() {
        Some(s) => s,
        None => child.into_inner().unwrap().wait().unwrap(),
    };
    let run = Run {
        status,
        acked,
        stderr: err,
        report,
        killed,
    };
    (dev, run)
}
