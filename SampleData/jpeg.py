"""A small baseline JPEG encoder (YCbCr 4:4:4, standard tables), so the sample
thumbnails are real JPEG files made here, with no imaging library needed."""
import math
import struct

ZIGZAG = [0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48,
          41, 34, 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15,
          23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63]

LUMA_Q = [16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40,
          57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35,
          55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112,
          100, 103, 99]
CHROMA_Q = [17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99,
            99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99] + [99] * 32

# Standard Huffman tables (ITU T.81 annex K): (bits per length, values).
DC_LUMA = ([0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0], list(range(12)))
DC_CHROMA = ([0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0], list(range(12)))
AC_LUMA = ([0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d], bytes.fromhex(
    "01020300041105122131410613516107227114328191a1082342b1c11552d1f02433627282090a161718191a"
    "25262728292a3435363738393a434445464748494a535455565758595a636465666768696a737475767778797a"
    "838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9ca"
    "d2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9fa"))
AC_CHROMA = ([0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77], bytes.fromhex(
    "000102031104052131061241510761711322328108144291a1b1c109233352f0156272d10a162434e125f11718"
    "191a262728292a35363738393a434445464748494a535455565758595a636465666768696a737475767778797a"
    "82838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9ca"
    "d2d3d4d5d6d7d8d9dae2e3e4e5e6e7e8e9eaf2f3f4f5f6f7f8f9fa"))


def huffman_codes(table):
    bits, values = table
    codes, code, k = {}, 0, 0
    for length in range(1, 17):
        for _ in range(bits[length - 1]):
            codes[values[k]] = (code, length)
            code += 1
            k += 1
        code <<= 1
    return codes


class BitWriter:
    def __init__(self):
        self.out = bytearray()
        self.accumulator = 0
        self.count = 0

    def write(self, value, length):
        for shift in range(length - 1, -1, -1):
            self.accumulator = (self.accumulator << 1) | ((value >> shift) & 1)
            self.count += 1
            if self.count == 8:
                self.out.append(self.accumulator)
                if self.accumulator == 0xFF:
                    self.out.append(0)
                self.accumulator = 0
                self.count = 0

    def flush(self):
        while self.count:
            self.write(1, 1)


COS = [[math.cos((2 * x + 1) * u * math.pi / 16) for x in range(8)] for u in range(8)]


def fdct(block):
    result = [0.0] * 64
    for v in range(8):
        for u in range(8):
            total = 0.0
            for y in range(8):
                for x in range(8):
                    total += block[y * 8 + x] * COS[u][x] * COS[v][y]
            cu = 1 / math.sqrt(2) if u == 0 else 1
            cv = 1 / math.sqrt(2) if v == 0 else 1
            result[v * 8 + u] = 0.25 * cu * cv * total
    return result


def magnitude(value):
    length = abs(value).bit_length()
    return (value if value >= 0 else value + (1 << length) - 1), length


def encode_block(writer, block, quant, previous_dc, dc_codes, ac_codes):
    coefficients = fdct(block)
    quantized = [int(round(coefficients[ZIGZAG[i]] / quant[ZIGZAG[i]])) for i in range(64)]
    diff = quantized[0] - previous_dc
    bits, length = magnitude(diff)
    writer.write(*dc_codes[length])
    if length:
        writer.write(bits, length)
    run = 0
    for i in range(1, 64):
        if quantized[i] == 0:
            run += 1
            continue
        while run > 15:
            writer.write(*ac_codes[0xF0])
            run -= 16
        bits, length = magnitude(quantized[i])
        writer.write(*ac_codes[(run << 4) | length])
        writer.write(bits, length)
        run = 0
    if run:
        writer.write(*ac_codes[0x00])
    return quantized[0]


def encode(width, height, pixel):
    """pixel(x, y) -> (r, g, b); returns the JPEG file's bytes."""
    codes = [huffman_codes(t) for t in (DC_LUMA, AC_LUMA, DC_CHROMA, AC_CHROMA)]
    writer = BitWriter()
    previous = [0, 0, 0]
    for block_y in range(0, height, 8):
        for block_x in range(0, width, 8):
            planes = [[0.0] * 64 for _ in range(3)]
            for y in range(8):
                for x in range(8):
                    r, g, b = pixel(min(block_x + x, width - 1), min(block_y + y, height - 1))
                    planes[0][y * 8 + x] = 0.299 * r + 0.587 * g + 0.114 * b - 128
                    planes[1][y * 8 + x] = -0.168736 * r - 0.331264 * g + 0.5 * b
                    planes[2][y * 8 + x] = 0.5 * r - 0.418688 * g - 0.081312 * b
            previous[0] = encode_block(writer, planes[0], LUMA_Q, previous[0], codes[0], codes[1])
            previous[1] = encode_block(writer, planes[1], CHROMA_Q, previous[1], codes[2], codes[3])
            previous[2] = encode_block(writer, planes[2], CHROMA_Q, previous[2], codes[2], codes[3])
    writer.flush()

    def segment(marker, payload):
        return struct.pack(">HH", marker, len(payload) + 2) + payload

    def dht(table_class, table_id, table):
        bits, values = table
        return bytes([(table_class << 4) | table_id]) + bytes(bits) + bytes(values)

    out = bytearray(b"\xff\xd8")
    out += segment(0xFFE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    out += segment(0xFFDB, bytes([0]) + bytes(LUMA_Q[z] for z in ZIGZAG) + bytes([1]) + bytes(CHROMA_Q[z] for z in ZIGZAG))
    out += segment(0xFFC0, struct.pack(">BHHB", 8, height, width, 3) + bytes([1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1]))
    out += segment(0xFFC4, dht(0, 0, DC_LUMA) + dht(1, 0, AC_LUMA) + dht(0, 1, DC_CHROMA) + dht(1, 1, AC_CHROMA))
    out += segment(0xFFDA, bytes([3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]))
    out += writer.out
    out += b"\xff\xd9"
    return bytes(out)
