//! Prints the float-stage IR of an ONNX model and the frontend's notes:
//! `cargo run -p sci-frontend --example lower -- MODEL.onnx [OUTPUT_NAME...]`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: lower MODEL.onnx [OUTPUT_NAME...]");
        return ExitCode::FAILURE;
    };
    let outputs = &args[1..];
    let result =
        sci_frontend::load(path).and_then(|m| m.lower((!outputs.is_empty()).then_some(outputs)));
    match result {
        Ok((program, notes)) => {
            print!("{}", sci_ir::text::print(&program));
            for n in notes {
                eprintln!("note: {n}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
