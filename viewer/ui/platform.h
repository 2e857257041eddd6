// The window system: a GLFW window with an OpenGL 3 context, Dear ImGui's GLFW and OpenGL 3
// backends, and (for --screenshot) an offscreen framebuffer of an exact size whose pixels
// can be read back. Everything GLFW- and GL-specific lives here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

struct GLFWwindow;

namespace hf::viewer::ui {

struct PlatformOptions {
  int width = 1600, height = 1000;
  bool visible = true;      // false: a hidden window, frames drawn offscreen
  std::string title = "hotfuse-view";
  const char* ini_file = nullptr;  // imgui.ini path, or null for none
};

class Platform {
 public:
  ~Platform();
  // Creates the window, the GL context and the ImGui context; false with *error set.
  bool init(const PlatformOptions& o, std::string* error);
  // HiDPI content scale of the window's monitor (1 when unknown or hidden).
  float content_scale() const { return scale_; }

  bool should_close() const;
  void set_title(const std::string& title);
  // Waits for input (or `timeout` seconds) in interactive mode.
  void wait_events(double timeout);
  // Whether the last begin_frame saw input (a key, a button, the wheel, the pointer moving,
  // a resize): the main loop keeps drawing a few frames after input, then sleeps in
  // wait_events until the next.
  bool had_input() const { return had_input_; }

  // One frame: begin (backends + ImGui::NewFrame), the app builds its UI, end (render, and
  // swap buffers or keep the offscreen image).
  void begin_frame();
  void end_frame();

  // Offscreen only: a scripted mouse for tests and screenshots: the pointer rests at (x, y)
  // from the first frame; with `click`, the left button goes down on frame 2 and up on 3.
  void script_mouse(float x, float y, bool click) {
    script_ = true;
    mouse_x_ = x;
    mouse_y_ = y;
    click_ = click;
  }

  // Offscreen only: a scripted key (a GLFW key code: 'W', GLFW_KEY_UP, ...) held down from
  // the second frame to the last, as a person holding it would (a press on frame 2).
  void script_key(int key) { key_ = key; }

  // The last offscreen frame as RGBA rows, top row first; false with *error when headless
  // rendering is not set up.
  bool read_pixels(std::vector<uint8_t>* rgba, std::string* error);

 private:
  bool create_offscreen(std::string* error);

  GLFWwindow* window_ = nullptr;
  bool imgui_ = false, offscreen_ = false;
  int width_ = 0, height_ = 0;
  float scale_ = 1;
  unsigned fbo_ = 0, color_rb_ = 0;
  bool script_ = false, click_ = false;
  int key_ = -1;
  float mouse_x_ = 0, mouse_y_ = 0;
  int frame_ = 0;
  bool had_input_ = true;
  double last_x_ = -1, last_y_ = -1;
};

}  // namespace hf::viewer::ui
