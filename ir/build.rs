//! Generates the text-format parser from `src/text/grammar.lalrpop`.
fn main() {
    lalrpop::process_src().expect("the IR text grammar compiles");
}
