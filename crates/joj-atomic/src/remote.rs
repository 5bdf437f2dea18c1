//! The transactional device across a process boundary: [`serve`] runs a device's commands for
//! one client connected over a Unix socket, and [`RemoteDevice`] is that client, a
//! [`TransactionalDevice`] the flash file layer and the `xftl` VFS run on unchanged.
//!
//! What it is for: the X-FTL case (Kang et al., SIGMOD '13) of a *process* that dies
//! (`kill -9`) in the middle of a transaction while the device, and the kernel, keep running.
//! The emulated eMMC is an in-memory model, so it must live outside the process that dies; here
//! it lives in the server's process. **When the connection ends** (end of stream,
//! a broken connection, or a malformed request), the server aborts every transaction this
//! connection began and neither committed nor aborted, before it returns the device. That is
//! the kernel noticing the dead process's open files and aborting its transaction: without it
//! the dead transaction would hold its pages forever and every later writer of them would be
//! refused (`FtlError::TxnConflict`). `docs/formats/xftl.md` §4.
//!
//! What it is not: a shared device. One connection is served at a time, and nothing else may
//! use the device while it is served.
//!
//! # Wire format
//!
//! Hand-written: twelve commands of a few fixed-width integers and one byte string each do not
//! need a serialization crate, and a fixed layout is easy to check against a hex dump. All
//! integers little-endian.
//!
//! ```text
//! request  = len u32 | op u8 | body          len counts op and body
//! reply    = len u32 | status u8 | body      status 0: ok, body as below
//!                                            status 1: the device's error, body = UTF-8 message
//!
//! op  command        request body                              ok reply body
//!  1  GEOMETRY       -                                         capacity u64 | sector u32 | optimal u32
//!  2  READ           offset u64 | len u32                      data
//!  3  WRITE          offset u64 | flags u8 | data              -
//!  4  WRITE_PACKED   flags u8 | n u32 | n × (offset u64 | len u32 | data)   -
//!  5  FLUSH          -                                         -
//!  6  DISCARD        offset u64 | len u64                      -
//!  7  BEGIN_TXN      -                                         tid u32
//!  8  WRITE_TXN      tid u32 | offset u64 | data               -
//!  9  READ_TXN       tid u32 | offset u64 | len u32            data
//! 10  COMMIT_TXN     tid u32                                   -
//! 11  ABORT_TXN      tid u32                                   -
//! 12  WRITE_TXN_KIND tid u32 | kind u8 | offset u64 | data     -
//!
//! flags: bit 0 FUA, bit 1 reliable write
//! kind:  0 data, 1 metadata (the data tag a device with NVM places by: i-FTL)
//! ```
//!
//! A frame longer than [`MAX_FRAME_BYTES`] is a protocol error. Errors the device returns go
//! back as their message and become [`DeviceError::Remote`] on the client; once the connection
//! breaks, the client returns [`DeviceError::Failed`] (the device's state, as the client knows
//! it, is unknown), as a device does after a failed command.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use joj_device::{
    BlockDevice, Counters, DeviceError, DeviceGeometry, PackedWrite, Tid, TransactionalDevice,
    WriteFlags, WriteKind,
};

/// Largest frame either side accepts (length field included in neither): 64 MiB of data plus
/// the header of any command.
pub const MAX_FRAME_BYTES: u32 = (64 << 20) + 64;

const OP_GEOMETRY: u8 = 1;
const OP_READ: u8 = 2;
const OP_WRITE: u8 = 3;
const OP_WRITE_PACKED: u8 = 4;
const OP_FLUSH: u8 = 5;
const OP_DISCARD: u8 = 6;
const OP_BEGIN_TXN: u8 = 7;
const OP_WRITE_TXN: u8 = 8;
const OP_READ_TXN: u8 = 9;
const OP_COMMIT_TXN: u8 = 10;
const OP_ABORT_TXN: u8 = 11;
const OP_WRITE_TXN_KIND: u8 = 12;

// `run` dispatches by range: the block commands, then the transaction commands, numbered
// without gaps.
const _: () = assert!(
    OP_GEOMETRY == 1 && OP_DISCARD + 1 == OP_BEGIN_TXN && OP_ABORT_TXN + 1 == OP_WRITE_TXN_KIND
);

const KIND_DATA: u8 = 0;
const KIND_METADATA: u8 = 1;

const STATUS_OK: u8 = 0;
const STATUS_ERR: u8 = 1;

const FLAG_FUA: u8 = 1;
const FLAG_RELIABLE: u8 = 2;

/// A frame being built: the length is filled in by `finish`.
struct Frame(Vec<u8>);

impl Frame {
    fn new(tag: u8) -> Frame {
        let mut b = Vec::with_capacity(64);
        b.extend_from_slice(&[0; 4]);
        b.push(tag);
        Frame(b)
    }

    fn u8(mut self, v: u8) -> Frame {
        self.0.push(v);
        self
    }

    fn u32(mut self, v: u32) -> Frame {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    fn u64(mut self, v: u64) -> Frame {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    fn bytes(mut self, v: &[u8]) -> Frame {
        self.0.extend_from_slice(v);
        self
    }

    fn finish(mut self) -> Vec<u8> {
        let len = (self.0.len() - 4) as u32;
        self.0[0..4].copy_from_slice(&len.to_le_bytes());
        self.0
    }
}

/// Why a frame could not be parsed: the connection is given up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    #[error("frame body ends {missing} bytes short of a {field_bytes}-byte field")]
    ShortBody { field_bytes: usize, missing: usize },
    #[error("{left} bytes left over after the body")]
    TrailingBytes { left: usize },
    #[error("unknown write flags {flags:#04x}")]
    UnknownFlags { flags: u8 },
    #[error("unknown data tag {kind} (0 data, 1 metadata)")]
    UnknownKind { kind: u8 },
    #[error("a request of {len} bytes (at most {MAX_FRAME_BYTES})")]
    TooLong { len: u64 },
    #[error("an empty frame (no command)")]
    EmptyFrame,
    #[error("unknown command {op}: client and server are not the same joj build")]
    UnknownCommand { op: u8 },
}

/// Reading a frame's body front to back; a short body is a protocol error.
struct Body<'a>(&'a [u8]);

impl<'a> Body<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtocolError> {
        if self.0.len() < n {
            return Err(ProtocolError::ShortBody {
                field_bytes: n,
                missing: n - self.0.len(),
            });
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ProtocolError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8, ProtocolError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, ProtocolError> {
        self.array().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, ProtocolError> {
        self.array().map(u64::from_le_bytes)
    }

    fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.0)
    }

    fn end(&self) -> Result<(), ProtocolError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(ProtocolError::TrailingBytes { left: self.0.len() })
        }
    }
}

/// One frame (tag and body), or `None` at a clean end of stream (before a frame's first byte).
fn read_frame(r: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut len[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let len = u32::from_le_bytes(len);
    if len == 0 || len > MAX_FRAME_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame of {len} bytes (1 to {MAX_FRAME_BYTES} allowed)"),
        ));
    }
    let mut frame = vec![0u8; len as usize];
    r.read_exact(&mut frame)?;
    Ok(Some(frame))
}

fn encode_flags(f: WriteFlags) -> u8 {
    (if f.fua { FLAG_FUA } else { 0 }) | (if f.reliable { FLAG_RELIABLE } else { 0 })
}

fn decode_flags(b: u8) -> Result<WriteFlags, ProtocolError> {
    if b & !(FLAG_FUA | FLAG_RELIABLE) != 0 {
        return Err(ProtocolError::UnknownFlags { flags: b });
    }
    Ok(WriteFlags {
        fua: b & FLAG_FUA != 0,
        reliable: b & FLAG_RELIABLE != 0,
    })
}

fn decode_kind(b: u8) -> Result<WriteKind, ProtocolError> {
    match b {
        KIND_DATA => Ok(WriteKind::Data),
        KIND_METADATA => Ok(WriteKind::Metadata),
        kind => Err(ProtocolError::UnknownKind { kind }),
    }
}

fn check_len(len: u64) -> Result<usize, ProtocolError> {
    if len > u64::from(MAX_FRAME_BYTES) {
        return Err(ProtocolError::TooLong { len });
    }
    Ok(len as usize)
}

/// A transactional device in another process, reached over a Unix socket ([`serve`] on the
/// other side). Every command is one request and its reply; the device's errors come back as
/// [`DeviceError::Remote`].
#[derive(Debug)]
pub struct RemoteDevice {
    stream: UnixStream,
    geometry: DeviceGeometry,
    /// The connection broke: further commands return `DeviceError::Failed`.
    broken: bool,
    /// Host-side counts (requests and bytes this client sent); the device's own counters stay
    /// with the device (read them from what [`serve`] returns).
    host: Counters,
}

impl RemoteDevice {
    /// Connect to the device served at `path`.
    pub fn connect(path: impl AsRef<Path>) -> Result<RemoteDevice, DeviceError> {
        let path = path.as_ref();
        let stream = UnixStream::connect(path).map_err(|e| {
            DeviceError::Remote(format!("cannot connect to {}: {e}", path.display()))
        })?;
        RemoteDevice::from_stream(stream)
    }

    /// Use a connected stream (asks the device for its geometry).
    pub fn from_stream(stream: UnixStream) -> Result<RemoteDevice, DeviceError> {
        let mut d = RemoteDevice {
            stream,
            geometry: DeviceGeometry {
                capacity_bytes: 0,
                sector_bytes: 0,
                optimal_write_bytes: 0,
            },
            broken: false,
            host: Counters::default(),
        };
        let reply = d.call(Frame::new(OP_GEOMETRY).finish())?;
        let mut b = Body(&reply);
        let g = (|| {
            let g = DeviceGeometry {
                capacity_bytes: b.u64()?,
                sector_bytes: b.u32()?,
                optimal_write_bytes: b.u32()?,
            };
            b.end()?;
            Ok::<_, ProtocolError>(g)
        })()
        .map_err(|e| d.protocol(format!("geometry reply: {e}")))?;
        d.geometry = g;
        Ok(d)
    }

    fn protocol(&mut self, msg: String) -> DeviceError {
        self.broken = true;
        DeviceError::Remote(format!("protocol error, connection given up: {msg}"))
    }

    /// Send one request and return the body of its ok reply.
    fn call(&mut self, request: Vec<u8>) -> Result<Vec<u8>, DeviceError> {
        if self.broken {
            return Err(DeviceError::Failed);
        }
        let r = self
            .stream
            .write_all(&request)
            .and_then(|()| read_frame(&mut self.stream));
        let frame = match r {
            Ok(Some(f)) => f,
            Ok(None) => {
                self.broken = true;
                return Err(DeviceError::Remote(
                    "the device's server closed the connection".into(),
                ));
            }
            Err(e) => {
                self.broken = true;
                return Err(DeviceError::Remote(format!(
                    "connection to the device lost: {e}"
                )));
            }
        };
        match frame.split_first() {
            Some((&STATUS_OK, body)) => Ok(body.to_vec()),
            Some((&STATUS_ERR, msg)) => Err(DeviceError::Remote(
                String::from_utf8_lossy(msg).into_owned(),
            )),
            _ => Err(self.protocol(format!("reply status {:?}", frame.first()))),
        }
    }

    /// A call whose ok reply is empty.
    fn call_empty(&mut self, request: Vec<u8>) -> Result<(), DeviceError> {
        let reply = self.call(request)?;
        if !reply.is_empty() {
            return Err(self.protocol(format!("{} bytes in an empty reply", reply.len())));
        }
        Ok(())
    }

    /// A call whose ok reply is `buf.len()` bytes of data.
    fn call_into(&mut self, request: Vec<u8>, buf: &mut [u8]) -> Result<(), DeviceError> {
        let reply = self.call(request)?;
        if reply.len() != buf.len() {
            return Err(self.protocol(format!(
                "{} bytes of data for a read of {}",
                reply.len(),
                buf.len()
            )));
        }
        buf.copy_from_slice(&reply);
        Ok(())
    }

    fn count_write(&mut self, bytes: usize, flags: WriteFlags) {
        self.host.host_write_requests += 1;
        self.host.host_write_bytes += bytes as u64;
        if flags.durable() {
            self.host.fua += 1;
        }
    }
}

impl BlockDevice for RemoteDevice {
    fn geometry(&self) -> DeviceGeometry {
        self.geometry
    }

    fn read(&mut self, offset_bytes: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        let req = Frame::new(OP_READ)
            .u64(offset_bytes)
            .u32(buf.len() as u32)
            .finish();
        self.call_into(req, buf)?;
        self.host.host_read_requests += 1;
        self.host.host_read_bytes += buf.len() as u64;
        Ok(())
    }

    fn write(
        &mut self,
        offset_bytes: u64,
        data: &[u8],
        flags: WriteFlags,
    ) -> Result<(), DeviceError> {
        let req = Frame::new(OP_WRITE)
            .u64(offset_bytes)
            .u8(encode_flags(flags))
            .bytes(data)
            .finish();
        self.call_empty(req)?;
        self.count_write(data.len(), flags);
        Ok(())
    }

    fn write_packed(
        &mut self,
        writes: &[PackedWrite<'_>],
        flags: WriteFlags,
    ) -> Result<(), DeviceError> {
        let mut f = Frame::new(OP_WRITE_PACKED)
            .u8(encode_flags(flags))
            .u32(writes.len() as u32);
        for w in writes {
            f = f.u64(w.offset_bytes).u32(w.data.len() as u32).bytes(w.data);
        }
        self.call_empty(f.finish())?;
        self.host.packed_commands += 1;
        let total: usize = writes.iter().map(|w| w.data.len()).sum();
        self.count_write(total, flags);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), DeviceError> {
        self.call_empty(Frame::new(OP_FLUSH).finish())?;
        self.host.flushes += 1;
        Ok(())
    }

    fn discard(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), DeviceError> {
        let req = Frame::new(OP_DISCARD)
            .u64(offset_bytes)
            .u64(len_bytes)
            .finish();
        self.call_empty(req)?;
        self.host.discards += 1;
        self.host.discard_bytes += len_bytes;
        Ok(())
    }

    /// Host-side counts only (requests, bytes, flushes, discards, commits and aborts this
    /// client sent); NAND work, time and latencies are the device's, in its own counters.
    fn counters(&self) -> Counters {
        self.host.clone()
    }
}

impl TransactionalDevice for RemoteDevice {
    fn begin_txn(&mut self) -> Result<Tid, DeviceError> {
        let reply = self.call(Frame::new(OP_BEGIN_TXN).finish())?;
        let mut b = Body(&reply);
        let tid = b
            .u32()
            .and_then(|t| b.end().map(|()| t))
            .map_err(|e| self.protocol(format!("begin reply: {e}")))?;
        Ok(Tid(tid))
    }

    fn write_txn(&mut self, tid: Tid, offset_bytes: u64, data: &[u8]) -> Result<(), DeviceError> {
        let req = Frame::new(OP_WRITE_TXN)
            .u32(tid.0)
            .u64(offset_bytes)
            .bytes(data)
            .finish();
        self.call_empty(req)?;
        self.count_write(data.len(), WriteFlags::NONE);
        Ok(())
    }

    fn write_txn_kind(
        &mut self,
        tid: Tid,
        offset_bytes: u64,
        data: &[u8],
        kind: WriteKind,
    ) -> Result<(), DeviceError> {
        let kind = match kind {
            WriteKind::Data => KIND_DATA,
            WriteKind::Metadata => KIND_METADATA,
        };
        let req = Frame::new(OP_WRITE_TXN_KIND)
            .u32(tid.0)
            .u8(kind)
            .u64(offset_bytes)
            .bytes(data)
            .finish();
        self.call_empty(req)?;
        self.count_write(data.len(), WriteFlags::NONE);
        Ok(())
    }

    fn read_txn(&mut self, tid: Tid, offset_bytes: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        let req = Frame::new(OP_READ_TXN)
            .u32(tid.0)
            .u64(offset_bytes)
            .u32(buf.len() as u32)
            .finish();
        self.call_into(req, buf)?;
        self.host.host_read_requests += 1;
        self.host.host_read_bytes += buf.len() as u64;
        Ok(())
    }

    fn commit_txn(&mut self, tid: Tid) -> Result<(), DeviceError> {
        self.call_empty(Frame::new(OP_COMMIT_TXN).u32(tid.0).finish())?;
        self.host.txn_commits += 1;
        Ok(())
    }

    fn abort_txn(&mut self, tid: Tid) -> Result<(), DeviceError> {
        self.call_empty(Frame::new(OP_ABORT_TXN).u32(tid.0).finish())?;
        self.host.txn_aborts += 1;
        Ok(())
    }
}

/// A `write_txn` the server just ran, passed to [`ServeOptions::after_write_txn`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnWrite {
    /// The transaction's place among those this connection began (1 = the first `begin_txn`).
    pub txn: u64,
    pub tid: Tid,
    /// This write's place among the transaction's successful `write_txn`s (1 = the first).
    pub write: u64,
}

/// How [`serve`] behaves.
pub struct ServeOptions<'a> {
    /// Abort the connection's open transactions when it ends (the kernel's job when a process
    /// dies). Off only in tests, as a canary: the dead transaction then keeps its pages.
    pub abort_on_disconnect: bool,
    /// Called after each successful `write_txn` ran on the device and before its reply is sent:
    /// a test kills the client here, so the kill falls between two of a transaction's writes.
    pub after_write_txn: Option<Box<dyn FnMut(TxnWrite) + Send + 'a>>,
}

impl Default for ServeOptions<'_> {
    fn default() -> Self {
        ServeOptions {
            abort_on_disconnect: true,
            after_write_txn: None,
        }
    }
}

/// What one connection did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServeReport {
    /// Requests served (a request that ended the connection as malformed is not counted).
    pub commands: u64,
    pub txns_begun: u64,
    pub txns_committed: u64,
    /// Transactions the client aborted itself.
    pub txns_aborted: u64,
    /// Transactions the connection left open, aborted by the server when it ended.
    pub aborted_on_disconnect: u64,
    /// Transactions the connection left open and the server left active
    /// (`abort_on_disconnect` off), or whose abort the device refused.
    pub left_active: u64,
    pub end: ConnectionEnd,
}

/// Why a served connection ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ConnectionEnd {
    /// End of stream before a request: the client closed it, or the kernel did for a client
    /// that died.
    #[default]
    Closed,
    /// Reading a request or sending a reply failed (a client killed while its reply was
    /// under way: a broken pipe).
    Io(String),
    /// A request the server could not parse; the connection was given up.
    Malformed(ProtocolError),
}

/// A transaction this connection began: its place and how many writes it made.
struct Open {
    txn: u64,
    writes: u64,
}

/// Serve `dev` to the client on `stream` until the connection ends, then abort the
/// transactions it left open (unless told not to) and hand the device back.
pub fn serve<D: TransactionalDevice>(
    mut stream: UnixStream,
    mut dev: D,
    mut opts: ServeOptions<'_>,
) -> (D, ServeReport) {
    let mut report = ServeReport::default();
    let mut open: BTreeMap<Tid, Open> = BTreeMap::new();
    loop {
        let frame = match read_frame(&mut stream) {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                report.end = ConnectionEnd::Io(format!("reading a request: {e}"));
                break;
            }
        };
        let (reply, wrote) = match run(&mut dev, &frame, &mut open, &mut report) {
            Ok(r) => r,
            Err(e) => {
                report.end = ConnectionEnd::Malformed(e);
                break;
            }
        };
        report.commands += 1;
        if let (Some(w), Some(hook)) = (wrote, opts.after_write_txn.as_mut()) {
            hook(w);
        }
        if let Err(e) = stream.write_all(&reply) {
            report.end = ConnectionEnd::Io(format!("sending a reply: {e}"));
            break;
        }
    }
    for (tid, _) in open {
        if opts.abort_on_disconnect && dev.abort_txn(tid).is_ok() {
            report.aborted_on_disconnect += 1;
        } else {
            report.left_active += 1;
        }
    }
    (dev, report)
}

fn reply_of<T>(r: Result<T, DeviceError>, ok: impl FnOnce(Frame, T) -> Frame) -> Vec<u8> {
    match r {
        Ok(v) => ok(Frame::new(STATUS_OK), v).finish(),
        Err(e) => Frame::new(STATUS_ERR)
            .bytes(e.to_string().as_bytes())
            .finish(),
    }
}

/// Run one request on the device: its reply, and the transactional write it made if any. An
/// `Err` is a malformed request (the connection is given up).
fn run<D: TransactionalDevice>(
    dev: &mut D,
    frame: &[u8],
    open: &mut BTreeMap<Tid, Open>,
    report: &mut ServeReport,
) -> Result<(Vec<u8>, Option<TxnWrite>), ProtocolError> {
    let (&op, body) = frame.split_first().ok_or(ProtocolError::EmptyFrame)?;
    let mut b = Body(body);
    match op {
        OP_GEOMETRY..=OP_DISCARD => run_block(dev, op, &mut b).map(|reply| (reply, None)),
        OP_BEGIN_TXN..=OP_WRITE_TXN_KIND => run_txn(dev, op, &mut b, open, report),
        _ => Err(ProtocolError::UnknownCommand { op }),
    }
}

fn none(f: Frame, (): ()) -> Frame {
    f
}

/// The block-device commands (`GEOMETRY` to `DISCARD`).
fn run_block<D: TransactionalDevice>(
    dev: &mut D,
    op: u8,
    b: &mut Body<'_>,
) -> Result<Vec<u8>, ProtocolError> {
    Ok(match op {
        OP_GEOMETRY => {
            b.end()?;
            let g = dev.geometry();
            Frame::new(STATUS_OK)
                .u64(g.capacity_bytes)
                .u32(g.sector_bytes)
                .u32(g.optimal_write_bytes)
                .finish()
        }
        OP_READ => {
            let off = b.u64()?;
            let mut buf = vec![0u8; check_len(u64::from(b.u32()?))?];
            b.end()?;
            let r = dev.read(off, &mut buf);
            reply_of(r, |f, ()| f.bytes(&buf))
        }
        OP_WRITE => {
            let off = b.u64()?;
            let flags = decode_flags(b.u8()?)?;
            reply_of(dev.write(off, b.rest(), flags), none)
        }
        OP_WRITE_PACKED => {
            let flags = decode_flags(b.u8()?)?;
            let n = b.u32()?;
            let mut writes = Vec::new();
            for _ in 0..n {
                let offset_bytes = b.u64()?;
                let len = check_len(u64::from(b.u32()?))?;
                writes.push(PackedWrite {
                    offset_bytes,
                    data: b.take(len)?,
                });
            }
            b.end()?;
            reply_of(dev.write_packed(&writes, flags), none)
        }
        OP_FLUSH => {
            b.end()?;
            reply_of(dev.flush(), none)
        }
        OP_DISCARD => {
            let off = b.u64()?;
            let len = b.u64()?;
            b.end()?;
            reply_of(dev.discard(off, len), none)
        }
        _ => return Err(ProtocolError::UnknownCommand { op }),
    })
}

/// The transaction commands (`BEGIN_TXN` to `ABORT_TXN`), keeping this connection's open
/// transactions and counts.
fn run_txn<D: TransactionalDevice>(
    dev: &mut D,
    op: u8,
    b: &mut Body<'_>,
    open: &mut BTreeMap<Tid, Open>,
    report: &mut ServeReport,
) -> Result<(Vec<u8>, Option<TxnWrite>), ProtocolError> {
    let reply = match op {
        OP_BEGIN_TXN => {
            b.end()?;
            let r = dev.begin_txn();
            if let Ok(tid) = r {
                report.txns_begun += 1;
                let txn = report.txns_begun;
                open.insert(tid, Open { txn, writes: 0 });
            }
            reply_of(r, |f, tid| f.u32(tid.0))
        }
        OP_WRITE_TXN | OP_WRITE_TXN_KIND => {
            let tid = Tid(b.u32()?);
            let kind = match op {
                OP_WRITE_TXN_KIND => decode_kind(b.u8()?)?,
                _ => WriteKind::Data,
            };
            let off = b.u64()?;
            let r = dev.write_txn_kind(tid, off, b.rest(), kind);
            let mut wrote = None;
            if r.is_ok() {
                if let Some(o) = open.get_mut(&tid) {
                    o.writes += 1;
                    wrote = Some(TxnWrite {
                        txn: o.txn,
                        tid,
                        write: o.writes,
                    });
                }
            }
            return Ok((reply_of(r, none), wrote));
        }
        OP_READ_TXN => {
            let tid = Tid(b.u32()?);
            let off = b.u64()?;
            let mut buf = vec![0u8; check_len(u64::from(b.u32()?))?];
            b.end()?;
            let r = dev.read_txn(tid, off, &mut buf);
            reply_of(r, |f, ()| f.bytes(&buf))
        }
        OP_COMMIT_TXN => {
            let tid = Tid(b.u32()?);
            b.end()?;
            let r = dev.commit_txn(tid);
            if r.is_ok() && open.remove(&tid).is_some() {
                report.txns_committed += 1;
            }
            reply_of(r, none)
        }
        OP_ABORT_TXN => {
            let tid = Tid(b.u32()?);
            b.end()?;
            let r = dev.abort_txn(tid);
            // Aborted, or not active (any more): either way not this connection's to abort.
            if open.remove(&tid).is_some() {
                report.txns_aborted += 1;
            }
            reply_of(r, none)
        }
        _ => return Err(ProtocolError::UnknownCommand { op }),
    };
    Ok((reply, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use joj_device::Profile;

    fn device() -> crate::XDevice {
        let p = Profile::builtin("galaxy-s5")
            .unwrap()
            .with_blocks_per_plane(64);
        crate::new_device(&p).unwrap()
    }

    /// Run `client` against a served device; the device and the server's report afterwards.
    fn with_server(
        abort_on_disconnect: bool,
        client: impl FnOnce(RemoteDevice) + Send,
    ) -> (crate::XDevice, ServeReport) {
        let (a, b) = UnixStream::pair().unwrap();
        std::thread::scope(|s| {
            let server = s.spawn(move || {
                let opts = ServeOptions {
                    abort_on_disconnect,
                    ..ServeOptions::default()
                };
                serve(a, device(), opts)
            });
            client(RemoteDevice::from_stream(b).unwrap());
            server.join().unwrap()
        })
    }

    #[test]
    fn commands_round_trip_and_errors_come_back_as_remote() {
        let (dev, report) = with_server(true, |mut r| {
            let g = r.geometry();
            let page = g.optimal_write_bytes as usize;
            let data: Vec<u8> = (0..page).map(|i| i as u8).collect();
            r.write(0, &data, WriteFlags::FUA).unwrap();
            r.flush().unwrap();
            let mut back = vec![0u8; page];
            r.read(0, &mut back).unwrap();
            assert_eq!(back, data);
            let t = r.begin_txn().unwrap();
            r.write_txn(t, page as u64, &data).unwrap();
            r.read_txn(t, page as u64, &mut back).unwrap();
            assert_eq!(back, data);
            // A plain write of a page the transaction holds: the device refuses it.
            let e = r.write(page as u64, &data, WriteFlags::NONE).unwrap_err();
            assert!(matches!(e, DeviceError::Remote(_)), "{e:?}");
            r.commit_txn(t).unwrap();
            r.write_packed(
                &[PackedWrite {
                    offset_bytes: 2 * page as u64,
                    data: &data,
                }],
                WriteFlags::NONE,
            )
            .unwrap();
            r.discard(2 * page as u64, page as u64).unwrap();
            let c = r.counters();
            assert_eq!((c.host_write_requests, c.txn_commits), (3, 1));
        });
        assert_eq!(report.end, ConnectionEnd::Closed);
        assert_eq!((report.txns_begun, report.txns_committed), (1, 1));
        assert_eq!(report.aborted_on_disconnect, 0);
        assert_eq!(report.commands, 11);
        dev.ftl().check_invariants();
    }

    #[test]
    fn a_dropped_connection_aborts_its_open_transactions() {
        let page = device().geometry().optimal_write_bytes as usize;
        for abort in [true, false] {
            let (dev, report) = with_server(abort, |mut r| {
                let t = r.begin_txn().unwrap();
                r.write_txn(t, 0, &vec![7u8; page]).unwrap();
                let done = r.begin_txn().unwrap();
                r.commit_txn(done).unwrap();
            });
            assert_eq!(report.txns_begun, 2);
            assert_eq!(
                (report.aborted_on_disconnect, report.left_active),
                if abort { (1, 0) } else { (0, 1) }
            );
            assert_eq!(dev.ftl().active_transactions(), usize::from(!abort));
            dev.ftl().check_invariants();
        }
    }

    #[test]
    fn a_malformed_request_ends_the_connection_and_aborts() {
        let (a, mut b) = UnixStream::pair().unwrap();
        let (dev, report) = std::thread::scope(|s| {
            let server = s.spawn(move || serve(a, device(), ServeOptions::default()));
            b.write_all(&Frame::new(OP_BEGIN_TXN).finish()).unwrap();
            assert_eq!(read_frame(&mut b).unwrap().unwrap()[0], STATUS_OK);
            b.write_all(&Frame::new(99).finish()).unwrap();
            assert!(read_frame(&mut b).unwrap().is_none(), "server hung up");
            server.join().unwrap()
        });
        assert_eq!(
            report.end,
            ConnectionEnd::Malformed(ProtocolError::UnknownCommand { op: 99 })
        );
        assert_eq!(report.aborted_on_disconnect, 1);
        assert_eq!(dev.ftl().active_transactions(), 0);
    }

    /// The data tag crosses the socket: a metadata write lands in the i-FTL device's NVM, a
    /// data write on its flash, and an unknown tag ends the connection.
    #[test]
    fn the_data_tag_reaches_an_iftl_device_over_the_socket() {
        let mut p = Profile::builtin("galaxy-s5")
            .unwrap()
            .with_blocks_per_plane(64);
        p.geometry.pages_per_block = 16;
        p.ftl.over_provisioning_percent = 15.0;
        p.iftl = Some(Default::default());
        let dev = joj_device::IftlDevice::new(&p).unwrap();
        let page = dev.page_bytes() as usize;
        let (a, b) = UnixStream::pair().unwrap();
        let (dev, report) = std::thread::scope(|s| {
            let server = s.spawn(move || serve(a, dev, ServeOptions::default()));
            let mut r = RemoteDevice::from_stream(b.try_clone().unwrap()).unwrap();
            let t = r.begin_txn().unwrap();
            r.write_txn_kind(t, 0, &vec![1u8; page], WriteKind::Metadata)
                .unwrap();
            r.write_txn_kind(t, page as u64, &vec![2u8; page], WriteKind::Data)
                .unwrap();
            r.commit_txn(t).unwrap();
            let bad = Frame::new(OP_WRITE_TXN_KIND)
                .u32(t.0)
                .u8(7)
                .u64(0)
                .bytes(&[0; 8])
                .finish();
            (&b).write_all(&bad).unwrap();
            assert!(read_frame(&mut &b).unwrap().is_none(), "server hung up");
            server.join().unwrap()
        });
        assert_eq!(
            report.end,
            ConnectionEnd::Malformed(ProtocolError::UnknownKind { kind: 7 })
        );
        let st = dev.stats();
        assert_eq!(st.metadata_bytes_to_nvm, page as u64, "{st:?}");
        assert_eq!(st.data_bytes_to_flash, page as u64, "{st:?}");
    }
}
