;; The bit mirror's scans (mirror-table.ts through row-scan.ts), sixteen bytes at a time: Hamming
;; distances of rows of sign bits, and dot products of rows of int8 components, to one query.
;; `npm run build` compiles this file (src/build-wasm.mjs) to dist/src/store/sqlite/row-scan.wasm.
(module
  (memory (export "memory") 1)

  ;; For each of `count` rows of `chunks` 16-byte chunks, laid out one after another from `rows`:
  ;; the number of bits in which it differs from the `chunks` chunks at `query`, stored as a u16
  ;; at `out` (one after another). A row's padding must be zero in both.
  (func (export "distances") (param $query i32) (param $rows i32) (param $chunks i32) (param $count i32) (param $out i32)
    (local $end i32) (local $left i32) (local $at i32) (local $sum v128)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 1))))
    (block $done
      (loop $row
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (local.set $sum (v128.const i64x2 0 0))
        (local.set $at (local.get $query))
        (local.set $left (local.get $chunks))
        (loop $chunk
          ;; Ones per byte (at most 8), added pairwise into 16-bit lanes: a lane holds 16 a chunk,
          ;; so a row of up to 4,095 chunks (65,520 dimensions) cannot overflow it.
          (local.set $sum
            (i16x8.add (local.get $sum)
              (i16x8.extadd_pairwise_i8x16_u
                (i8x16.popcnt (v128.xor (v128.load (local.get $rows)) (v128.load (local.get $at)))))))
          (local.set $rows (i32.add (local.get $rows) (i32.const 16)))
          (local.set $at (i32.add (local.get $at) (i32.const 16)))
          (br_if $chunk (local.tee $left (i32.sub (local.get $left) (i32.const 1)))))
        (local.set $sum (i32x4.extadd_pairwise_i16x8_u (local.get $sum)))
        (i32.store16 (local.get $out)
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $sum)) (i32x4.extract_lane 1 (local.get $sum)))
            (i32.add (i32x4.extract_lane 2 (local.get $sum)) (i32x4.extract_lane 3 (local.get $sum)))))
        (local.set $out (i32.add (local.get $out) (i32.const 2)))
        (br $row))))

  ;; For each of the `count` row numbers (i32) at `slots`: the dot product of that row of `chunks`
  ;; 16-byte chunks of int8 (row n at `rows` + n * 16 * chunks) with the `chunks` chunks at
  ;; `query`, stored as an i32 at `out` (one after another). Components in [-127, 127]: a 32-bit
  ;; lane gains at most 4 * 127 * 127 a chunk, so no overflow below 33,000 chunks.
  (func (export "dots") (param $query i32) (param $rows i32) (param $chunks i32) (param $slots i32) (param $count i32) (param $out i32)
    (local $end i32) (local $left i32) (local $at i32) (local $row i32) (local $a v128) (local $b v128) (local $sum v128)
    (local.set $end (i32.add (local.get $slots) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $slots) (local.get $end)))
        (local.set $row
          (i32.add (local.get $rows) (i32.mul (i32.load (local.get $slots)) (i32.shl (local.get $chunks) (i32.const 4)))))
        (local.set $sum (v128.const i64x2 0 0))
        (local.set $at (local.get $query))
        (local.set $left (local.get $chunks))
        (loop $chunk
          (local.set $a (v128.load (local.get $row)))
          (local.set $b (v128.load (local.get $at)))
          (local.set $sum
            (i32x4.add (local.get $sum)
              (i32x4.add
                (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $a)) (i16x8.extend_low_i8x16_s (local.get $b)))
                (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $a)) (i16x8.extend_high_i8x16_s (local.get $b))))))
          (local.set $row (i32.add (local.get $row) (i32.const 16)))
          (local.set $at (i32.add (local.get $at) (i32.const 16)))
          (br_if $chunk (local.tee $left (i32.sub (local.get $left) (i32.const 1)))))
        (i32.store (local.get $out)
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $sum)) (i32x4.extract_lane 1 (local.get $sum)))
            (i32.add (i32x4.extract_lane 2 (local.get $sum)) (i32x4.extract_lane 3 (local.get $sum)))))
        (local.set $slots (i32.add (local.get $slots) (i32.const 4)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $next)))))
