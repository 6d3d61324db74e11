use ai_tool::prelude::*;

struct Weather {
    celsius: f64,
}

struct Station;

#[ai_tools]
impl Station {
    /// Reads the weather.
    #[ai_tool]
    fn weather(&self) -> Weather {
        Weather { celsius: 20.0 }
    }
}

type Reading<T> = Result<T, String>;

/// Reads the weather, or fails.
#[ai_tool]
fn reading() -> Reading<Weather> {
    Ok(Weather { celsius: 20.0 })
}

fn main() {
    let _ = Weather { celsius: 0.0 }.celsius;
}
