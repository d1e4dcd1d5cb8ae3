#include "image_codec.h"

#include <limits.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

/* A progressive JPEG of a few kilobytes can hold thousands of scans, each one a pass over
   the whole image: past this many the file is refused (libjpeg-turbo's own advice). */
#define TR_MAXIMUM_SCANS 500

/* libjpeg reports a fatal error by calling error_exit, whose default prints and calls
   exit(): here it jumps back to the call instead, with the message kept. */
struct tr_errors {
    struct jpeg_error_mgr manager;
    jmp_buf escape;
    char message[JMSG_LENGTH_MAX];
};

static void tr_error_exit(j_common_ptr info) {
    struct tr_errors *errors = (struct tr_errors *)info->err;
    (*info->err->format_message)(info, errors->message);
    longjmp(errors->escape, 1);
}

/* Warnings (level -1) are how libjpeg reports damaged data it decodes anyway (a file cut
   short is padded with grey): a damaged file is no image to keep. Two warnings are about
   metadata only and are let through. Trace messages (level >= 0) are dropped. */
static void tr_emit_message(j_common_ptr info, int level) {
    if (level >= 0) return;
    int code = info->err->msg_code;
    if (code == JWRN_JFIF_MAJOR || code == JWRN_ADOBE_XFORM) {
        info->err->num_warnings++;
        return;
    }
    tr_error_exit(info);
}

/* Never to stderr: the messages reach the caller through its buffer. */
static void tr_output_message(j_common_ptr info) {
    (void)info;
}

static void tr_errors_install(struct tr_errors *errors, j_common_ptr info) {
    info->err = jpeg_std_error(&errors->manager);
    errors->manager.error_exit = tr_error_exit;
    errors->manager.emit_message = tr_emit_message;
    errors->manager.output_message = tr_output_message;
    errors->message[0] = '\0';
}

struct tr_progress {
    struct jpeg_progress_mgr manager;
    struct tr_errors *errors;
};

static void tr_progress_check(j_common_ptr info) {
    if (!info->is_decompressor) return;
    j_decompress_ptr decompress = (j_decompress_ptr)info;
    if (decompress->input_scan_number > TR_MAXIMUM_SCANS) {
        struct tr_progress *progress = (struct tr_progress *)info->progress;
        snprintf(progress->errors->message, sizeof progress->errors->message,
                 "the JPEG has more than %d scans", TR_MAXIMUM_SCANS);
        longjmp(progress->errors->escape, 1);
    }
}

static void tr_say(char *message, size_t size, const char *text) {
    if (message != NULL && size > 0) snprintf(message, size, "%s", text);
}

int tr_jpeg_decode(const unsigned char *bytes, size_t count, int keep_pixels, unsigned long maximum_pixels,
                   tr_image *image, char *message, size_t message_size) {
    if (image == NULL) return TR_IMAGE_INVALID_ARGUMENT;
    memset(image, 0, sizeof *image);
    if (bytes == NULL || count == 0) {
        tr_say(message, message_size, "there are no bytes");
        return TR_IMAGE_DAMAGED;
    }
    if (count > (size_t)ULONG_MAX) {
        tr_say(message, message_size, "the file is larger than libjpeg reads");
        return TR_IMAGE_TOO_LARGE;
    }
    struct jpeg_decompress_struct info;
    struct tr_errors errors;
    struct tr_progress progress;
    /* Written after setjmp and read after a longjmp: kept in memory, not in a register. */
    volatile int status = TR_IMAGE_DAMAGED;
    unsigned char *volatile pixels = NULL;

    tr_errors_install(&errors, (j_common_ptr)&info);
    if (setjmp(errors.escape)) {
        int result = status;
        if (result == TR_IMAGE_DAMAGED && errors.manager.msg_code == JERR_OUT_OF_MEMORY) result = TR_IMAGE_NO_MEMORY;
        free(pixels);
        jpeg_destroy_decompress(&info);
        tr_say(message, message_size, errors.message[0] ? errors.message : "libjpeg failed");
        return result;
    }
    jpeg_create_decompress(&info);
    progress.manager.progress_monitor = tr_progress_check;
    progress.errors = &errors;
    info.progress = &progress.manager;
    jpeg_mem_src(&info, bytes, (unsigned long)count);
    jpeg_read_header(&info, TRUE);

    unsigned long area = (unsigned long)info.image_width * (unsigned long)info.image_height;
    if (info.image_width == 0 || info.image_height == 0 || area > maximum_pixels) {
        status = TR_IMAGE_TOO_LARGE;
        snprintf(errors.message, sizeof errors.message, "the image is %ux%u pixels, more than the %lu allowed",
                 info.image_width, info.image_height, maximum_pixels);
        longjmp(errors.escape, 1);
    }
    if (keep_pixels) info.out_color_space = JCS_RGB;
    jpeg_start_decompress(&info);

    size_t row_bytes = (size_t)info.output_width * (size_t)info.output_components;
    if (keep_pixels) {
        pixels = malloc(row_bytes * info.output_height);
        if (pixels == NULL) {
            status = TR_IMAGE_NO_MEMORY;
            snprintf(errors.message, sizeof errors.message, "no memory for %ux%u pixels", info.output_width, info.output_height);
            longjmp(errors.escape, 1);
        }
        while (info.output_scanline < info.output_height) {
            JSAMPROW row = pixels + row_bytes * info.output_scanline;
            jpeg_read_scanlines(&info, &row, 1);
        }
    } else {
        /* Freed with the decompressor, also on the error path. */
        JSAMPARRAY row = (*info.mem->alloc_sarray)((j_common_ptr)&info, JPOOL_IMAGE, (JDIMENSION)row_bytes, 1);
        while (info.output_scanline < info.output_height) jpeg_read_scanlines(&info, row, 1);
    }
    /* Reads to the end-of-image marker: data damaged after the last scanline fails here. */
    jpeg_finish_decompress(&info);

    image->width = (int)info.output_width;
    image->height = (int)info.output_height;
    image->components = info.num_components;
    image->pixels = pixels;
    jpeg_destroy_decompress(&info);
    return TR_IMAGE_OK;
}

int tr_jpeg_encode(const unsigned char *rgb, int width, int height, int quality,
                   unsigned char **output, unsigned long *output_count, char *message, size_t message_size) {
    if (output == NULL || output_count == NULL) return TR_IMAGE_INVALID_ARGUMENT;
    *output = NULL;
    *output_count = 0;
    if (rgb == NULL || width <= 0 || height <= 0 || width > JPEG_MAX_DIMENSION || height > JPEG_MAX_DIMENSION) {
        tr_say(message, message_size, "the image has no pixels, or more on a side than JPEG allows");
        return TR_IMAGE_INVALID_ARGUMENT;
    }
    if (quality < 1 || quality > 100) {
        tr_say(message, message_size, "the quality must be from 1 to 100");
        return TR_IMAGE_INVALID_ARGUMENT;
    }
    struct jpeg_compress_struct info;
    struct tr_errors errors;
    tr_errors_install(&errors, (j_common_ptr)&info);
    if (setjmp(errors.escape)) {
        /* jpeg_mem_dest's buffer is the caller's (it may have been grown and moved). */
        free(*output);
        *output = NULL;
        *output_count = 0;
        jpeg_destroy_compress(&info);
        tr_say(message, message_size, errors.message[0] ? errors.message : "libjpeg failed");
        return TR_IMAGE_NO_MEMORY;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, output, output_count);
    info.image_width = (JDIMENSION)width;
    info.image_height = (JDIMENSION)height;
    info.input_components = 3;
    info.in_color_space = JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    info.optimize_coding = TRUE;
    jpeg_start_compress(&info, TRUE);
    size_t row_bytes = (size_t)width * 3;
    while (info.next_scanline < info.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + row_bytes * info.next_scanline);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    return TR_IMAGE_OK;
}

void tr_image_free(void *pointer) {
    free(pointer);
}
