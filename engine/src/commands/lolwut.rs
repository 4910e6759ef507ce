//! LOLWUT [VERSION v] [args...]: computer art and the Redis version.
//!
//! Redis 7.0's `lolwutCommand` (src/lolwut.c) dispatches on the version:
//! 5 (and 4.9) draw Georg Nees's "Schotter" (src/lolwut5.c), 6 (and 5.9)
//! the skyscrapers of src/lolwut6.c, and anything else, the default
//! included, prints only `Redis ver. 7.0.15`. seedkv draws Schotter as
//! Redis does, pixel for pixel, with one difference: Redis displaces the
//! squares below the second row with libc's `rand()`, seeded from the
//! clock at start-up, and seedkv with the engine's seeded RNG, so those
//! rows differ from any given redis-server's (as two redis-servers'
//! differ from each other); the first two rows, the size and the footer
//! are the same. VERSION 6 prints what the default prints (seedkv has no
//! skyscrapers).

use rand::Rng;

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::commands::connection::REDIS_VERSION;
use crate::util::parse_i64_strict;

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "lolwut",
    arity: -1,
    flags: READONLY | FAST,
    group: "server",
    acl_categories: &["read", "fast"],
    summary: "Display some computer art and the Redis version",
    since: "5.0.0",
    handler: Some(lolwut),
    ..CommandSpec::DEFAULT
}];

/// lolwut5.c's limits, "so that LOLWUT is always reasonably fast".
const COLS_MAX: i64 = 1000;
const SQUARES_PER_ROW_MAX: i64 = 200;
const SQUARES_PER_COL_MAX: i64 = 200;
/// Redis's limits still allow a canvas of 2000 × 399,204 pixels (800 MB
/// and a 300 MB reply, for `1000 1 200`); seedkv refuses a canvas over
/// this many pixels instead of allocating it.
pub const CANVAS_PIXELS_MAX: u64 = 2000 * 8000;
/// Canvas pixels cleared, drawn or rendered per work unit.
pub const PIXELS_PER_WORK_UNIT: u64 = 64;
/// glibc's RAND_MAX: the displacements are fractions of `rand()` over it.
const RAND_MAX: i32 = i32::MAX;

/// lwDrawSquare divides by this literal, not by √2 to full precision, and
/// the rounding of the corners depends on the difference.
#[allow(clippy::approx_constant)]
const REDIS_SQRT_2: f64 = 1.4142135623;

const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";

fn lolwut(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let mut rest = &args[1..];
    let mut version = None;
    if args.len() >= 3 && args[1].eq_ignore_ascii_case(b"version") {
        let Some(v) = parse_i64_strict(&args[2]) else {
            return ctx.error(NOT_AN_INTEGER);
        };
        // Redis prints the version as "%u.0.0" of an unsigned int and
        // looks at its first three characters.
        version = Some(format!("{}.0.0", v as u32));
        rest = &args[3..];
    }
    match version.as_deref().map(str::as_bytes) {
        Some([b'5', b'.', c, ..]) if *c != b'9' => schotter_command(ctx, rest),
        Some([b'4', b'.', b'9', ..]) => schotter_command(ctx, rest),
        _ => {
            let text = format!("Redis ver. {REDIS_VERSION}\n");
            ctx.w().verbatim("txt", text.as_bytes());
        }
    }
}

/// lolwut5Command: `[terminal columns] [squares per row] [squares per
/// column]`, 66, 8 and 12 by default, each clamped to its limits.
fn schotter_command(ctx: &mut Ctx, args: &[Vec<u8>]) {
    let mut params = [66, 8, 12];
    let limits = [COLS_MAX, SQUARES_PER_ROW_MAX, SQUARES_PER_COL_MAX];
    for (i, arg) in args.iter().take(params.len()).enumerate() {
        let Some(v) = parse_i64_strict(arg) else {
            return ctx.error(NOT_AN_INTEGER);
        };
        params[i] = v.clamp(1, limits[i]);
    }
    let [cols, per_row, per_col] = params.map(|p| p as i32);
    let shape = Shape::of(cols, per_row, per_col);
    let pixels = shape.width as u64 * shape.height as u64;
    if pixels > CANVAS_PIXELS_MAX {
        return ctx.error("ERR LOLWUT canvas too large");
    }
    ctx.work(pixels / PIXELS_PER_WORK_UNIT + (per_row * per_col) as u64);
    let canvas = draw_schotter(&shape, per_row, per_col, &mut ctx.server.rng);
    let mut text = canvas.render();
    text.extend_from_slice(b"\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ");
    text.extend_from_slice(REDIS_VERSION.as_bytes());
    text.push(b'\n');
    ctx.w().verbatim("txt", &text);
}

/// The canvas's size and the squares' side, in C's float arithmetic.
struct Shape {
    width: i32,
    height: i32,
    padding: i32,
    side: f32,
}

impl Shape {
    fn of(cols: i32, per_row: i32, per_col: i32) -> Shape {
        let width = cols * 2;
        let padding = if width > 4 { 2 } else { 0 };
        let side = (width - padding * 2) as f32 / per_row as f32;
        let height = (side * per_col as f32 + (padding * 2) as f32) as i32;
        Shape {
            width,
            height,
            padding,
            side,
        }
    }
}

/// A canvas of pixels, each on or off (lwCanvas).
struct Canvas {
    width: i32,
    height: i32,
    pixels: Vec<bool>,
}

impl Canvas {
    fn new(width: i32, height: i32) -> Canvas {
        let pixels = vec![false; (width.max(0) as usize) * (height.max(0) as usize)];
        Canvas {
            width,
            height,
            pixels,
        }
    }

    fn index(&self, x: i32, y: i32) -> Option<usize> {
        let inside = (0..self.width).contains(&x) && (0..self.height).contains(&y);
        inside.then(|| (x + y * self.width) as usize)
    }

    fn set(&mut self, x: i32, y: i32) {
        if let Some(i) = self.index(x, y) {
            self.pixels[i] = true;
        }
    }

    fn get(&self, x: i32, y: i32) -> bool {
        self.index(x, y).is_some_and(|i| self.pixels[i])
    }

    /// lwDrawLine: Bresenham from (x1, y1) to (x2, y2).
    fn line(&mut self, (mut x1, mut y1): (i32, i32), (x2, y2): (i32, i32)) {
        let (dx, dy) = ((x2 - x1).abs(), (y2 - y1).abs());
        let (sx, sy) = (if x1 < x2 { 1 } else { -1 }, if y1 < y2 { 1 } else { -1 });
        let mut err = dx - dy;
        loop {
            self.set(x1, y1);
            if x1 == x2 && y1 == y2 {
                break;
            }
            let e2 = err * 2;
            if e2 > -dy {
                err -= dy;
                x1 += sx;
            }
            if e2 < dx {
                err += dx;
                y1 += sy;
            }
        }
    }

    /// lwDrawSquare: the four corners on the circle through them, starting
    /// at 45 degrees plus `angle`, in C's mix of float and double.
    fn square(&mut self, x: i32, y: i32, size: f32, angle: f32) {
        let size = ((f64::from(size) / REDIS_SQRT_2) as f32).round();
        let mut k = (std::f64::consts::FRAC_PI_4 + f64::from(angle)) as f32;
        let mut corners = [(0, 0); 4];
        for corner in &mut corners {
            let kd = f64::from(k);
            corner.0 = (kd.sin() * f64::from(size) + f64::from(x)).round() as i32;
            corner.1 = (kd.cos() * f64::from(size) + f64::from(y)).round() as i32;
            k = (f64::from(k) + std::f64::consts::FRAC_PI_2) as f32;
        }
        for j in 0..4 {
            self.line(corners[j], corners[(j + 1) % 4]);
        }
    }

    /// Braille characters, one per 2 × 4 pixels, a row of them per line;
    /// every row ends in a newline but (as in Redis) one that ends exactly
    /// at the last pixel row.
    fn render(&self) -> Vec<u8> {
        const DOTS: [(i32, i32); 8] = [
            (0, 0),
            (0, 1),
            (0, 2),
            (1, 0),
            (1, 1),
            (1, 2),
            (0, 3),
            (1, 3),
        ];
        let mut text = Vec::new();
        for y in (0..self.height).step_by(4) {
            for x in (0..self.width).step_by(2) {
                let mut byte = 0u32;
                for (bit, (dx, dy)) in DOTS.iter().enumerate() {
                    if self.get(x + dx, y + dy) {
                        byte |= 1 << bit;
                    }
                }
                let mut utf8 = [0u8; 3];
                let c = char::from_u32(0x2800 + byte).expect("braille is a char");
                text.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            }
            if y != self.height - 1 {
                text.push(b'\n');
            }
        }
        text
    }
}

/// lwDrawSchotter: a grid of squares, rotated and displaced more the lower
/// the row (rows 0 and 1 stay in place).
fn draw_schotter(shape: &Shape, per_row: i32, per_col: i32, rng: &mut impl Rng) -> Canvas {
    let mut canvas = Canvas::new(shape.width, shape.height);
    let (side, padding) = (shape.side, shape.padding as f32);
    let mut rand = || rng.gen_range(0..=RAND_MAX);
    for y in 0..per_col {
        for x in 0..per_row {
            let mut sx = (x as f32 * side + side / 2.0 + padding) as i32;
            let mut sy = (y as f32 * side + side / 2.0 + padding) as i32;
            let mut angle = 0.0;
            if y > 1 {
                let mut r: [f32; 3] = std::array::from_fn(|_| {
                    rand() as f32 / RAND_MAX as f32 / per_col as f32 * y as f32
                });
                for r in &mut r {
                    if rand() % 2 == 1 {
                        *r = -*r;
                    }
                }
                angle = r[0];
                sx = (sx as f32 + r[1] * side / 3.0) as i32;
                sy = (sy as f32 + r[2] * side / 3.0) as i32;
            }
            canvas.square(sx, sy, side, angle);
        }
    }
    canvas
}

#[cfg(test)]
mod tests {
    use crate::resp::Frame;
    use crate::testing::{err, TestEngine};

    const FOOTER: &str = "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. 7.0.15\n";

    fn lolwut(t: &mut TestEngine, args: &[&str]) -> String {
        let c = t.connect();
        let mut full = vec!["LOLWUT"];
        full.extend_from_slice(args);
        match t.cmd(c, &full) {
            Frame::Bulk(b) => String::from_utf8(b).expect("UTF-8 art"),
            other => panic!("expected the art, got {other:?}"),
        }
    }

    /// Two rows of squares or fewer are drawn without randomness: these
    /// are redis-server 7.0.15's replies, byte for byte.
    #[test]
    fn schotter_without_displaced_rows_matches_redis() {
        let mut t = TestEngine::new();
        let cases: &[(&[&str], &str)] = &[
            (
                &["10", "3", "2"],
                "⢰⠒⠒⢲⠒⠒⣶⠒⠒⡆\n⢸⣀⣀⣸⣀⣀⣿⣀⣀⡇\n⢸⠀⠀⢸⠀⠀⣿⠀⠀⡇\n⠘⠒⠒⠚⠒⠒⠛⠒⠒⠃\n",
            ),
            (&["2", "1", "1"], "⡏⠉\n"),
            (&["3", "1", "1"], "⠀⡤⡄\n⠀⠉⠁\n"),
            (&["1", "1", "1"], "⠋\n"),
            (&["7", "2", "1"], "⢰⠒⠒⣶⠒⠒⡆\n⢸⣀⣀⣿⣀⣀⡇\n⠀⠀⠀⠀⠀⠀⠀"),
        ];
        for (args, art) in cases {
            let mut full = vec!["VERSION", "5"];
            full.extend_from_slice(args);
            assert_eq!(lolwut(&mut t, &full), format!("{art}{FOOTER}"), "{args:?}");
        }
    }

    #[test]
    fn the_default_is_the_version_and_bad_input_errs_as_redis() {
        let mut t = TestEngine::new();
        assert_eq!(lolwut(&mut t, &[]), "Redis ver. 7.0.15\n");
        assert_eq!(lolwut(&mut t, &["1", "2", "3"]), "Redis ver. 7.0.15\n");
        assert_eq!(lolwut(&mut t, &["VERSION"]), "Redis ver. 7.0.15\n");
        assert_eq!(lolwut(&mut t, &["VERSION", "7"]), "Redis ver. 7.0.15\n");
        assert_eq!(lolwut(&mut t, &["VERSION", "-1"]), "Redis ver. 7.0.15\n");
        let c = t.connect();
        let not_int = err("ERR value is not an integer or out of range");
        assert_eq!(t.cmd(c, &["LOLWUT", "VERSION", "x"]), not_int);
        assert_eq!(t.cmd(c, &["LOLWUT", "VERSION", "5", "1", "x"]), not_int);
        // Clamped to 1..=1000 columns, as Redis does.
        let tiny = lolwut(&mut t, &["VERSION", "5", "0", "0", "0"]);
        assert_eq!(tiny, format!("⠋\n{FOOTER}"));
        assert_eq!(
            t.cmd(c, &["LOLWUT", "VERSION", "5", "1000", "1", "200"]),
            err("ERR LOLWUT canvas too large")
        );
    }

    /// The default Schotter: 66 columns, 8 × 12 squares; the displaced
    /// rows depend on the seed, the rest does not.
    #[test]
    fn default_schotter_has_redis_shape_and_is_deterministic() {
        let a = lolwut(&mut TestEngine::new(), &["VERSION", "5"]);
        let b = lolwut(&mut TestEngine::new(), &["VERSION", "5"]);
        assert_eq!(a, b, "same seed, same art");
        let lines: Vec<&str> = a.lines().collect();
        // 132 × 196 pixels: 49 rows of 66 characters, then the footer.
        assert_eq!(lines.len(), 49 + 2);
        assert!(lines[..49].iter().all(|l| l.chars().count() == 66));
        assert!(a.ends_with(FOOTER));
        // The top edge of the first row of squares, from redis-server.
        let top = format!("⠀{}⡄", "⡤⠤⠤⠤⠤⠤⠤⠤".repeat(8));
        assert_eq!(lines[0], top);
    }
}
