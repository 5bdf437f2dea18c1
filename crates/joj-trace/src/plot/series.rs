//! The classes a trace picture tells apart: each one's lane, colour and marker, and how a
//! request's size is written beside it.

use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters_backend::{BackendCoord, DrawingErrorKind};

use super::style::{BLUE, GREEN, GREY, ORANGE, PURPLE, SKY, VERMILION};
use crate::record::{BlockClass, FileRole, TraceRecord};

#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    Circle,
    Ring,
    Triangle,
    Square,
    HollowSquare,
    Cross,
    Dot,
    Bar,
}

/// One class's lane.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Series {
    pub label: &'static str,
    pub shape: Shape,
    pub color: RGBColor,
}

pub(crate) const DATABASE: Series = Series {
    label: "database data",
    shape: Shape::Circle,
    color: BLUE,
};
pub(crate) const WAL: Series = Series {
    label: "WAL data",
    shape: Shape::Triangle,
    color: VERMILION,
};
pub(crate) const ROLLBACK: Series = Series {
    label: "rollback journal data",
    shape: Shape::Square,
    color: ORANGE,
};
pub(crate) const OTHER_DATA: Series = Series {
    label: "other file data",
    shape: Shape::Ring,
    color: SKY,
};
pub(crate) const METADATA: Series = Series {
    label: "FS metadata",
    shape: Shape::Cross,
    color: GREEN,
};
pub(crate) const FS_JOURNAL: Series = Series {
    label: "FS journal",
    shape: Shape::HollowSquare,
    color: PURPLE,
};
pub(crate) const UNCLASSIFIED: Series = Series {
    label: "unclassified",
    shape: Shape::Dot,
    color: GREY,
};
pub(crate) const READ: Series = Series {
    label: "reads (any class)",
    shape: Shape::Ring,
    color: RGBColor(150, 150, 150),
};
pub(crate) const DISCARD: Series = Series {
    label: "discards (range)",
    shape: Shape::Bar,
    color: RGBColor(150, 150, 150),
};

/// The lanes, top to bottom: the FS journal first (the JOJ), then the logs, the database, the
/// rest.
pub(crate) const WRITE_SERIES: [Series; 7] = [
    FS_JOURNAL,
    WAL,
    ROLLBACK,
    DATABASE,
    OTHER_DATA,
    METADATA,
    UNCLASSIFIED,
];

/// The lane a written range is drawn in (an index of [`WRITE_SERIES`]).
pub(crate) fn write_series(rec: &TraceRecord) -> usize {
    match (rec.class, rec.file) {
        (BlockClass::FsJournal, _) => 0,
        (BlockClass::Data, Some(FileRole::Wal)) => 1,
        (BlockClass::Data, Some(FileRole::RollbackJournal)) => 2,
        (BlockClass::Data, Some(FileRole::Database)) => 3,
        (BlockClass::Data, _) => 4,
        (BlockClass::Metadata, _) => 5,
        (BlockClass::Unknown | BlockClass::Flush, _) => 6,
    }
}

/// A marker centred on a point, sized in pixels so it looks the same at any zoom; a discard's
/// bar spans its range (`to`).
pub(crate) struct Marker<C> {
    pub at: C,
    pub shape: Shape,
    pub color: RGBColor,
}

impl<'a, C> PointCollection<'a, C> for &'a Marker<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Marker<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut pos: I,
        backend: &mut DB,
        _parent_dim: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = pos.next() else {
            return Ok(());
        };
        let filled = self.color.filled();
        let line = self.color.stroke_width(1);
        match self.shape {
            Shape::Circle => backend.draw_circle((x, y), 3, &filled, true),
            Shape::Ring => backend.draw_circle((x, y), 3, &line, false),
            Shape::Dot => backend.draw_circle((x, y), 2, &filled, true),
            Shape::Triangle => {
                backend.fill_polygon([(x, y - 4), (x - 4, y + 3), (x + 4, y + 3)], &filled)
            }
            Shape::Square => backend.draw_rect((x - 3, y - 3), (x + 3, y + 3), &filled, true),
            Shape::HollowSquare => backend.draw_rect((x - 3, y - 3), (x + 3, y + 3), &line, false),
            Shape::Cross => {
                let thick = self.color.stroke_width(2);
                backend.draw_line((x - 3, y - 3), (x + 3, y + 3), &thick)?;
                backend.draw_line((x - 3, y + 3), (x + 3, y - 3), &thick)
            }
            Shape::Bar => backend.draw_line((x, y - 5), (x, y + 5), &self.color.stroke_width(3)),
        }
    }
}

/// `4096` → `"4K"`, `1048576` → `"1M"`, `512` → `"512B"`: how the papers label request sizes.
pub(crate) fn size_label(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{}M", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{}K", bytes / KIB)
    } else {
        format!("{bytes}B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_labelled_like_the_papers() {
        assert_eq!(size_label(4096), "4K");
        assert_eq!(size_label(512), "512B");
        assert_eq!(size_label(1536), "1536B");
        assert_eq!(size_label(2 << 20), "2M");
        assert_eq!(size_label(1024 * 1024 + 4096), "1028K");
    }
}
