//! One definition of the counter sets joj's VFSes keep: a plain snapshot struct with a
//! field-by-field `delta`, and optionally the atomic struct the VFS bumps, with `snapshot`.

/// `counter_set!(Name; field: "doc", ...)`: a `Copy` snapshot struct of `u64` counters with
/// `delta(&self, before) -> Name` (saturating, field by field). The invoking crate needs `serde`.
#[macro_export]
macro_rules! counter_set {
    ($name:ident; $($field:ident: $doc:literal),* $(,)?) => {
        /// A snapshot of the counters.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ::serde::Serialize, ::serde::Deserialize)]
        pub struct $name {
            $(#[doc = $doc] #[serde(default)] pub $field: u64,)*
        }

        impl $name {
            /// `self - before`, field by field.
            pub fn delta(&self, before: &$name) -> $name {
                $name { $($field: self.$field.saturating_sub(before.$field),)* }
            }
        }
    };
}

/// `atomic_counter_set!(Name, AtomicName; field: "doc", ...)`: [`counter_set!`] plus the atomic
/// struct a VFS bumps from any thread, with `snapshot() -> Name`.
#[macro_export]
macro_rules! atomic_counter_set {
    ($name:ident, $atomic:ident; $($field:ident: $doc:literal),* $(,)?) => {
        $crate::counter_set!($name; $($field: $doc),*);

        #[derive(Default)]
        #[doc(hidden)]
        pub struct $atomic {
            $(pub(crate) $field: ::std::sync::atomic::AtomicU64,)*
        }

        impl $atomic {
            pub fn snapshot(&self) -> $name {
                $name { $($field: self.$field.load(::std::sync::atomic::Ordering::Relaxed),)* }
            }
        }
    };
}
