//! `cargo ragaliq calibrate` (see `ragaliq::calibration`).

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> Result<bool, String> {
    Err("calibrate is not built yet".into())
}
