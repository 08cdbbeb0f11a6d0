//! `sci-compiler`: the driver behind `sci-compile`.
