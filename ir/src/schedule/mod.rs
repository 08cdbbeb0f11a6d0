//! The schedule of a program: which protocol runs each instruction ([`Step`], one rule
//! per op in [`Step::of`]) and in which order, with which independent instructions run
//! as one call ([`waves`]). Both are derived once from the public program, so both
//! parties agree on them without a message; the runtime's executor runs the waves, the
//! cost model ([`crate::cost::predict`]) prices them and the compiler's report counts
//! their protocol calls, each dispatching on the [`Step`] and on nothing else.
//!
//! | module | what |
//! |---|---|
//! | [`step`] | [`Step`]: local, ReLU, truncation, division, pooling, product by backend, reveal |
//! | [`waves`](mod@waves) | levels of the dependency graph; the same batching step of a level as one call |

pub mod step;
pub mod waves;

pub use step::Step;
pub use waves::{Wave, waves};
