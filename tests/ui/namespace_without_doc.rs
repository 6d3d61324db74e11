use ai_tool::ai_tools;

pub struct Trips;

#[ai_tools(namespace = "trips")]
impl Trips {
    /// Tomorrow's weather.
    #[ai_tool]
    fn forecast(&self) -> u32 {
        1
    }
}

fn main() {}
