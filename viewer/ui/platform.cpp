#include "viewer/ui/platform.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <GL/gl.h>
#include <GL/glext.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <string>

namespace hf::viewer::ui {

namespace {

std::string g_glfw_error;

void glfw_error(int code, const char* text) {
  g_glfw_error = std::string(text ? text : "?") + " (GLFW error " + std::to_string(code) + ")";
}

// The framebuffer-object entry points (GL 3.0): loaded through GLFW, as GL/gl.h declares
// only OpenGL 1.x.
struct FboFns {
  PFNGLGENFRAMEBUFFERSPROC gen_framebuffers = nullptr;
  PFNGLBINDFRAMEBUFFERPROC bind_framebuffer = nullptr;
  PFNGLDELETEFRAMEBUFFERSPROC delete_framebuffers = nullptr;
  PFNGLGENRENDERBUFFERSPROC gen_renderbuffers = nullptr;
  PFNGLBINDRENDERBUFFERPROC bind_renderbuffer = nullptr;
  PFNGLDELETERENDERBUFFERSPROC delete_renderbuffers = nullptr;
  PFNGLRENDERBUFFERSTORAGEPROC renderbuffer_storage = nullptr;
  PFNGLFRAMEBUFFERRENDERBUFFERPROC framebuffer_renderbuffer = nullptr;
  PFNGLCHECKFRAMEBUFFERSTATUSPROC check_framebuffer_status = nullptr;
  bool load() {
    auto get = [](const char* name) { return glfwGetProcAddress(name); };
    gen_framebuffers = reinterpret_cast<PFNGLGENFRAMEBUFFERSPROC>(get("glGenFramebuffers"));
    bind_framebuffer = reinterpret_cast<PFNGLBINDFRAMEBUFFERPROC>(get("glBindFramebuffer"));
    delete_framebuffers = reinterpret_cast<PFNGLDELETEFRAMEBUFFERSPROC>(get("glDeleteFramebuffers"));
    gen_renderbuffers = reinterpret_cast<PFNGLGENRENDERBUFFERSPROC>(get("glGenRenderbuffers"));
    bind_renderbuffer = reinterpret_cast<PFNGLBINDRENDERBUFFERPROC>(get("glBindRenderbuffer"));
    delete_renderbuffers = reinterpret_cast<PFNGLDELETERENDERBUFFERSPROC>(get("glDeleteRenderbuffers"));
    renderbuffer_storage = reinterpret_cast<PFNGLRENDERBUFFERSTORAGEPROC>(get("glRenderbufferStorage"));
    framebuffer_renderbuffer =
        reinterpret_cast<PFNGLFRAMEBUFFERRENDERBUFFERPROC>(get("glFramebufferRenderbuffer"));
    check_framebuffer_status =
        reinterpret_cast<PFNGLCHECKFRAMEBUFFERSTATUSPROC>(get("glCheckFramebufferStatus"));
    return gen_framebuffers && bind_framebuffer && delete_framebuffers && gen_renderbuffers &&
           bind_renderbuffer && delete_renderbuffers && renderbuffer_storage &&
           framebuffer_renderbuffer && check_framebuffer_status;
  }
};
FboFns g_fbo;

// Set by the input callbacks (installed before ImGui's, which chain to them).
bool g_input = false;
void on_key(GLFWwindow*, int, int, int, int) { g_input = true; }
void on_char(GLFWwindow*, unsigned) { g_input = true; }
void on_button(GLFWwindow*, int, int, int) { g_input = true; }
void on_scroll(GLFWwindow*, double, double) { g_input = true; }
void on_focus(GLFWwindow*, int) { g_input = true; }
void on_enter(GLFWwindow*, int) { g_input = true; }
void on_resize(GLFWwindow*, int, int) { g_input = true; }

}  // namespace

Platform::~Platform() {
  if (imgui_) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
  if (window_) {
    if (fbo_) g_fbo.delete_framebuffers(1, &fbo_);
    if (color_rb_) g_fbo.delete_renderbuffers(1, &color_rb_);
    glfwDestroyWindow(window_);
  }
  glfwTerminate();
}

bool Platform::init(const PlatformOptions& o, std::string* error) {
  glfwSetErrorCallback(glfw_error);
  if (!glfwInit()) {
    *error = "cannot open a window: " + g_glfw_error +
             (std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY")
                  ? std::string()
                  : std::string(" (no DISPLAY: for --screenshot without a screen, run it under "
                                "xvfb-run -a)"));
    return false;
  }
  width_ = o.width;
  height_ = o.height;
  glfwWindowHint(GLFW_VISIBLE, o.visible ? GLFW_TRUE : GLFW_FALSE);
  // OpenGL 3.3 core, else whatever 3.x the driver gives (GLSL 130).
  const char* glsl = "#version 330 core";
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  window_ = glfwCreateWindow(o.width, o.height, o.title.c_str(), nullptr, nullptr);
  if (!window_) {
    glfwDefaultWindowHints();
    glfwWindowHint(GLFW_VISIBLE, o.visible ? GLFW_TRUE : GLFW_FALSE);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    glsl = "#version 130";
    window_ = glfwCreateWindow(o.width, o.height, o.title.c_str(), nullptr, nullptr);
  }
  if (!window_) {
    *error = "cannot create an OpenGL 3 window: " + g_glfw_error;
    return false;
  }
  glfwMakeContextCurrent(window_);
  glfwSwapInterval(o.visible ? 1 : 0);
  if (o.visible) {
    float sx = 1, sy = 1;
    glfwGetWindowContentScale(window_, &sx, &sy);
    scale_ = sx > 0.5f && sx < 4 ? sx : 1;
  }

  glfwSetKeyCallback(window_, on_key);
  glfwSetCharCallback(window_, on_char);
  glfwSetMouseButtonCallback(window_, on_button);
  glfwSetScrollCallback(window_, on_scroll);
  glfwSetWindowFocusCallback(window_, on_focus);
  glfwSetCursorEnterCallback(window_, on_enter);
  glfwSetFramebufferSizeCallback(window_, on_resize);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = o.ini_file;
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  if (!ImGui_ImplGlfw_InitForOpenGL(window_, true) || !ImGui_ImplOpenGL3_Init(glsl)) {
    *error = "cannot initialise Dear ImGui's GLFW / OpenGL 3 backends";
    return false;
  }
  imgui_ = true;
  if (!o.visible && !create_offscreen(error)) return false;
  return true;
}

bool Platform::create_offscreen(std::string* error) {
  if (!g_fbo.load()) {
    *error = "the OpenGL driver has no framebuffer objects (OpenGL 3.0 is needed)";
    return false;
  }
  g_fbo.gen_framebuffers(1, &fbo_);
  g_fbo.bind_framebuffer(GL_FRAMEBUFFER, fbo_);
  g_fbo.gen_renderbuffers(1, &color_rb_);
  g_fbo.bind_renderbuffer(GL_RENDERBUFFER, color_rb_);
  g_fbo.renderbuffer_storage(GL_RENDERBUFFER, GL_RGBA8, width_, height_);
  g_fbo.framebuffer_renderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color_rb_);
  if (g_fbo.check_framebuffer_status(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
    *error = "cannot create an offscreen framebuffer of " + std::to_string(width_) + "x" +
             std::to_string(height_);
    return false;
  }
  offscreen_ = true;
  return true;
}

bool Platform::should_close() const { return glfwWindowShouldClose(window_); }

void Platform::set_title(const std::string& title) { glfwSetWindowTitle(window_, title.c_str()); }

void Platform::wait_events(double timeout) { glfwWaitEventsTimeout(timeout); }

void Platform::begin_frame() {
  if (!offscreen_) {
    glfwPollEvents();
    double x = 0, y = 0;
    glfwGetCursorPos(window_, &x, &y);
    had_input_ = g_input || x != last_x_ || y != last_y_;
    for (int b = 0; b < 3; ++b) had_input_ |= glfwGetMouseButton(window_, b) == GLFW_PRESS;
    g_input = false;
    last_x_ = x;
    last_y_ = y;
  }
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  if (offscreen_) {
    // The exact requested size, whatever the (hidden) window got; no mouse.
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(static_cast<float>(width_), static_cast<float>(height_));
    io.DisplayFramebufferScale = ImVec2(1, 1);
    io.MousePos = script_ ? ImVec2(mouse_x_, mouse_y_) : ImVec2(-FLT_MAX, -FLT_MAX);
    for (bool& down : io.MouseDown) down = false;
    io.MouseDown[0] = script_ && click_ && frame_ == 1;
    io.MouseWheel = 0;
    if (key_ == '?') {  // a character, typed once
      if (frame_ == 1) io.AddInputCharacter('?');
    } else if (key_ >= 0 && key_ < static_cast<int>(IM_ARRAYSIZE(io.KeysDown))) {
      io.KeysDown[key_] = frame_ >= 1;
    }
    io.DeltaTime = 1.0f / 60;
    ++frame_;
  }
  ImGui::NewFrame();
}

void Platform::end_frame() {
  ImGui::Render();
  int w = width_, h = height_;
  if (offscreen_)
    g_fbo.bind_framebuffer(GL_FRAMEBUFFER, fbo_);
  else
    glfwGetFramebufferSize(window_, &w, &h);
  glViewport(0, 0, w, h);
  glClearColor(0.96f, 0.96f, 0.96f, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  if (offscreen_)
    glFinish();
  else
    glfwSwapBuffers(window_);
}

bool Platform::read_pixels(std::vector<uint8_t>* rgba, std::string* error) {
  if (!offscreen_) {
    *error = "not rendering offscreen";
    return false;
  }
  g_fbo.bind_framebuffer(GL_FRAMEBUFFER, fbo_);
  std::vector<uint8_t> raw(static_cast<size_t>(width_) * height_ * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width_, height_, GL_RGBA, GL_UNSIGNED_BYTE, raw.data());
  if (glGetError() != GL_NO_ERROR) {
    *error = "glReadPixels failed";
    return false;
  }
  // GL's first row is the bottom one.
  rgba->resize(raw.size());
  const size_t row = static_cast<size_t>(width_) * 4;
  for (int y = 0; y < height_; ++y)
    std::copy(raw.begin() + row * (height_ - 1 - y), raw.begin() + row * (height_ - y),
              rgba->begin() + row * y);
  return true;
}

}  // namespace hf::viewer::ui
