import { render } from 'preact'
render(<p>hello</p>, document.getElementById('app')!)
