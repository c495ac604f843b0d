// The names of OkHttp 4's Kotlin API that a copied `kotlin` request uses, on Debian's OkHttp 3.13
// (libokhttp-java): Debian ships no OkHttp 4 and this machine reaches no Maven repository.
// RequestCodeTests compiles a copy with this file, the copy's `okhttp3.….Companion.…` imports
// replaced by `import okhttp4names.*`; everything else in the copy is compiled as it was written.
package okhttp4names

import okhttp3.MediaType
import okhttp3.RequestBody
import okhttp3.Response
import okhttp3.ResponseBody

fun String.toMediaType(): MediaType = MediaType.get(this)

fun ByteArray.toRequestBody(contentType: MediaType? = null): RequestBody = RequestBody.create(contentType, this)

val Response.code: Int get() = code()

val Response.body: ResponseBody? get() = body()
